"""The five tools the agent works with."""

from __future__ import annotations

from mini_agent.tools.base import ToolRegistry


def default_tools() -> ToolRegistry:
    """The registry of the five built-in tools, in the order the model sees them."""
    from mini_agent.tools.bash import bash
    from mini_agent.tools.edit_file import edit_file
    from mini_agent.tools.read_file import read_file
    from mini_agent.tools.web_fetch import web_fetch
    from mini_agent.tools.write_file import write_file

    return ToolRegistry([read_file, write_file, edit_file, bash, web_fetch])
