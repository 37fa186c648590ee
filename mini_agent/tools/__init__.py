"""The tools the agent works with: read_file, write_file, edit_file, bash, web_fetch, one module each, job_output
and stop_job for bash's background jobs (jobs.py), exit_plan_mode (plan.py: a plan put to the human) and
todo_write (todos.py; the list as data: todo_list.py), and the registry that turns typed functions into the schemas
the model sees (base.py). Each declaration holds the tool's facts (alias, key argument, whether it edits
files); `builtin_tool` finds a built-in tool by name or alias before any session's registry exists.

Shared by the file tools and by @mentions (context/): textfile.py (encoding, BOM, line endings, atomic writes) and
file_view.py (paths that are not usable text, numbered lines); image_file.py (an image recognised, checked and
fitted to the API's limits with Pillow) also by attached images, MCP tools' images and the token estimate. Private
to the tools: _edit_help.py, _arguments.py, _stamps.py; web_connect.py, web_content.py and html_to_markdown.py
serve web_fetch.

May import the layers below it (undo, processes, settings, safety, files and the bottom modules); never the
agent, context/, ui/, app/ or cli/.
"""

from __future__ import annotations

from functools import lru_cache

from mini_agent.safety.rules import (
    BASH,
    EDIT_FILE,
    EXIT_PLAN_MODE,
    JOB_OUTPUT,
    READ_FILE,
    STOP_JOB,
    TODO_WRITE,
    WEB_FETCH,
    WRITE_FILE,
)
from mini_agent.tools.base import Tool, ToolRegistry

__all__ = [
    "BASH",
    "EDIT_FILE",
    "EXIT_PLAN_MODE",
    "JOB_OUTPUT",
    "READ_FILE",
    "STOP_JOB",
    "TODO_WRITE",
    "WEB_FETCH",
    "WRITE_FILE",
    "builtin_tool",
    "default_tools",
]
"""The names: for the few places above that must name a built-in tool (the policy's own call, a default);
everything else about a tool is read from its declaration."""


def default_tools() -> ToolRegistry:
    """The registry of the built-in tools, in the order the model sees them."""
    from mini_agent.tools.bash import bash
    from mini_agent.tools.edit_file import edit_file
    from mini_agent.tools.jobs import job_output, stop_job
    from mini_agent.tools.plan import exit_plan_mode
    from mini_agent.tools.read_file import read_file
    from mini_agent.tools.todos import todo_write
    from mini_agent.tools.web_fetch import web_fetch
    from mini_agent.tools.write_file import write_file

    tools = [read_file, write_file, edit_file, bash, job_output, stop_job, web_fetch, todo_write, exit_plan_mode]
    return ToolRegistry(tools)


@lru_cache(maxsize=1)
def _builtin() -> ToolRegistry:
    return default_tools()


def builtin_tool(name: str) -> Tool | None:
    """A built-in tool by its name or its alias (`Read`), for what is read before any session's registry exists
    (a command file's `allowed-tools`)."""
    return _builtin().named(name)
