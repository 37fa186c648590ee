"""One editor session of `mini-agent acp`: the agent made by the one builder, as the REPL's is (same policy,
sandbox, undo, hooks, MCP servers and session file), and its turns.

Everything here runs on the main thread (acp_runner.py). Nobody at a terminal can answer trust questions, so a
project's untrusted MCP servers, hooks and allow rules are left out with a notice on stderr, as in a one-shot
run; the editor's own MCP servers (`session/new`'s `mcpServers`) are the user's, trusted like their config.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mini_agent import gc_pause
from mini_agent.app.acp_prompt import turn_input
from mini_agent.app.acp_updates import UpdateMapper
from mini_agent.errors import StepLimitReached, TurnAborted
from mini_agent.settings import Settings

if TYPE_CHECKING:
    from mini_agent.agent import Agent
    from mini_agent.app.lifecycle import SessionLifecycle
    from mini_agent.gate import ApprovalRequest
    from mini_agent.safety.permissions import Decision

STOP_REASONS = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens",
    "refusal": "refusal",
}
"""The last reply's stop reason -> the ACP stop reason; anything else ended the turn normally."""

Send = Callable[[str, Any], None]
"""(session id, update): one `session/update` to the editor, in order."""
Ask = Callable[[str, UpdateMapper, "ApprovalRequest"], "Decision"]
"""(session id, mapper, request): the editor's answer to a permission question."""


@dataclass
class AcpSession:
    id: str
    agent: Agent
    lifecycle: SessionLifecycle
    mapper: UpdateMapper
    settings: Settings
    send: Callable[[Any], None]
    cancel_requested: bool = False
    """Set by `session/cancel` (the protocol's thread): a turn that has not begun yet ends at once."""

    def turn(self, blocks: list, interruptible: Callable[[object], Any]) -> str:
        """One prompt: the ACP stop reason. `interruptible(token)` is the window a cancel may interrupt."""
        gc_pause.resume()  # start-up is over once the editor prompts, whether or not the turn asks the model
        given = turn_input(blocks)
        enter(self.settings.cwd)
        self.lifecycle.undo.begin_turn()
        try:
            with interruptible(self.id):
                if self.cancel_requested:
                    raise KeyboardInterrupt
                result = self.agent.run_turn(given.text, given.attached, images=given.images)
            return STOP_REASONS.get(result.stop_reason or "", "end_turn")
        except (TurnAborted, KeyboardInterrupt):
            return "cancelled"  # the partial reply and every call are settled in the conversation (agent.py)
        except StepLimitReached:
            return "max_turn_requests"
        finally:
            for update in self.mapper.turn_ended():
                self.send(update)
            warning = self.lifecycle.after_turn()
            if warning:
                self.notify(warning)

    def notify(self, text: str) -> None:
        from acp import update_agent_thought_text

        self.send(update_agent_thought_text(f"mini-agent: {text}\n"))

    def close(self) -> None:
        self.lifecycle.close()


class _Outlet:
    """Updates of a session whose id is not known yet (its file is made by the build) wait here."""

    def __init__(self, send: Send) -> None:
        self.id: str | None = None
        self._send, self._held = send, []

    def __call__(self, update: Any) -> None:
        if self.id is None:
            self._held.append(update)
        else:
            self._send(self.id, update)

    def open(self, session_id: str) -> None:
        self.id = session_id
        for update in self._held:
            self._send(session_id, update)
        self._held = []


def enter(directory) -> None:
    """The process works in the session's project while it builds or runs it, as the REPL does in its own:
    sessions of several projects take turns on the one main thread."""
    try:
        os.chdir(directory)
    except OSError:
        pass  # everything that matters is given the directory; a vanished one fails there, with its error


def open_session(settings: Settings, editor_servers: tuple, resume: str | None, send: Send, ask: Ask) -> AcpSession:
    """A new session (`resume` None) or a stored one continued (its id), built complete."""
    enter(settings.cwd)
    from mini_agent.app.build import AgentBuilder
    from mini_agent.app.launch import project_parts, provider_for
    from mini_agent.app.lifecycle import SessionLifecycle

    if editor_servers:
        known = {server.name for server in editor_servers}
        kept = tuple(server for server in settings.mcp_servers if server.name not in known)
        settings = replace(settings, mcp_servers=(*kept, *editor_servers))
    settings, provider = provider_for(settings)
    settings, servers, hooks = project_parts(settings, False, sys.stderr, start_servers=True)
    lifecycle = SessionLifecycle(settings, resume)
    outlet = _Outlet(send)
    mapper = UpdateMapper(settings.cwd)

    def emit(event) -> None:
        for update in mapper.updates(event):
            outlet(update)

    agent = AgentBuilder(settings, provider, lifecycle, servers, hooks)(
        emit, lambda request: ask(outlet.id or "", mapper, request)
    )
    mapper.tools = agent.registry.get
    provider.warm_up()
    if servers is not None:  # the session is ready when its servers' tools are (the prompt follows at once)
        from mini_agent.app.mcp_setup import wait_for_servers

        wait_for_servers(agent, servers, settings.mcp_timeout)
    outlet.open(lifecycle.session_id)
    return AcpSession(lifecycle.session_id, agent, lifecycle, mapper, settings, outlet)


def editor_servers(given: list | None) -> tuple:
    """The MCP servers an editor passes with `session/new` as mini-agent's definitions (the user's own)."""
    from mini_agent.mcp.servers import ServerDef

    servers = []
    for server in given or ():
        source = "the editor (ACP session/new)"
        name = re.sub(r"[^A-Za-z0-9_-]", "-", server.name) or "editor"  # it becomes part of tool names
        if getattr(server, "command", None):
            env = tuple((variable.name, variable.value) for variable in server.env or ())
            servers.append(ServerDef(name, "user", source, "stdio", server.command, tuple(server.args), env))
        elif getattr(server, "url", None):
            transport = "sse" if getattr(server, "type", "") == "sse" else "http"
            headers = tuple((header.name, header.value) for header in server.headers or ())
            servers.append(ServerDef(name, "user", source, transport, url=server.url, headers=headers))
    return tuple(servers)
