"""A failed MCP server, told once: a notice for the human and a tool_degraded hint for the model (segment 3)
on all of its tools until the server is back. The hint lives in the agent's run hints: a server's health is a
fact of this process, not of the saved conversation."""

from __future__ import annotations

from typing import Any

from mini_agent.events import HintChanged, Notice
from mini_agent.mcp.manager import JOINED
from mini_agent.mcp.oauth import NEEDS_LOGIN
from mini_agent.xmltext import system_hint


def reporter(agent: Any):
    """`report(server, error)` for the manager: error None means the server is back."""

    def report(server: str, error: str | None) -> None:
        key = f"mcp_degraded:{server}"  # not "tool_degraded:": this notice says why, the generic one would not
        if error == JOINED:
            agent.emit(Notice(f"MCP server {server} is ready: its tools are offered from the next step on."))
            return
        if error is None:
            if key in agent.run_hints:
                agent.set_run_hint(key, None)
                agent.emit(HintChanged(key, None))
                agent.emit(Notice(f"MCP server {server} is running again."))
            return
        text = (
            f"The MCP server {server} failed: {error[:300]} Its tools (mcp__{server}__*) may fail; calling one "
            "starts the server again. Prefer other tools unless the task needs this server, and say so."
        )
        agent.set_run_hint(key, system_hint("tool_degraded", text, tool=f"mcp__{server}__*"))
        agent.emit(HintChanged(key, agent.run_hints[key]))
        said = f"{error}." if error.startswith(NEEDS_LOGIN) else f"failed: {error}"
        agent.emit(Notice(f"MCP server {server} {said}"))

    return report
