"""Continue a stored session in a new agent, so the next turn sends what it would have had the run never stopped.

The log gives back the transcript, hints, instructions and usage (`Session.restore`). What the agent kept only
in memory is rebuilt from it here: the context ledger (which blocks the model has already seen), the
recent-activity lines and the size anchor of the last reply. A conversation the API would reject back (as files
written by older versions can hold) is repaired on the way (model/wellformed.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_agent.context.blocks import P0, Ledger, is_injected
from mini_agent.conversation import Session
from mini_agent.model.messages import tool_result, tool_uses
from mini_agent.model.wellformed import repair, safe
from mini_agent.usage import Usage

if TYPE_CHECKING:
    from mini_agent.agent import Agent
    from mini_agent.sessions.journal import SessionWriter
    from mini_agent.sessions.store import LoadedSession
    from mini_agent.tools.base import ToolRegistry

UNANSWERED = (
    "Not run to completion: the session stopped before this call returned. It may have run in part; check its "
    "effects before running it again."
)
NOT_RUN = "Not run"
"""How the agent's results for calls it never ran begin (refused, interrupted, cut off)."""


def resume_into(agent: Agent, loaded: LoadedSession, writer: SessionWriter | None = None) -> Session:
    """Make a freshly built `agent` continue `loaded`; with `writer` (SessionStore.reopen), new entries go on
    in the same file. A tool call the stored run left without a result gets an error result, so the next
    request is valid."""
    from mini_agent.agent import RECENT_CALLS

    session = loaded.restore()
    # A file written before the conversation was kept valid on the way in (lone surrogates, a call with an input
    # that is not an object or an id used twice) is repaired here, so it can always be continued.
    session.messages = repair(session.messages)
    session.hints = safe(session.hints)
    if writer is not None:
        session.attach(writer.write)
    anchor = size_anchor(loaded.entries)
    settle_unanswered_calls(session)
    calls = recent_calls(loaded.entries, agent.registry, RECENT_CALLS)
    agent.continue_conversation(session, replay_ledger(loaded.entries), calls, anchor)
    return session


def replay_ledger(entries: list[dict]) -> Ledger:
    """The ledger as the context engine held it at the end of the log.

    Each user turn marks the blocks sent beside the typed words. A compaction leaves the blocks the engine
    shows again (that turn's P0 blocks): those in the new view's opening message when the history was
    summarised, else every P0 block sent so far, which differs from the engine's own choice only for a P0
    block whose source stopped producing it before that compaction.
    """
    ledger = Ledger()
    for entry in entries:
        if entry["type"] == "message" and "typed" in entry:
            for block in entry["message"]["content"][1:]:  # the first block is the typed text, never a block
                if block.get("type") == "text":
                    ledger.mark_rendered(block["text"])
        elif entry["type"] == "compaction":
            view = entry["view"]
            shown = _shown_again(view[0]) if view else None
            if shown is None:
                shown = [name for name in ledger.sent if ledger.priority(name) == P0]
            ledger.keep(shown)
    return ledger


def _shown_again(first: dict) -> list[str] | None:
    """The P0 block names in a compacted view's opening message; None when the view does not open with one."""
    content = first.get("content")
    if first.get("role") != "user" or not isinstance(content, list) or not content:
        return None
    if not all(is_injected(block) for block in content):
        return None
    headers = [Ledger.header(block["text"]) for block in content]
    return [header[0] for header in headers if header is not None and header[1] == P0]


def recent_calls(entries: list[dict], registry: ToolRegistry, limit: int) -> list[str]:
    """The agent's one-line summaries of the last `limit` calls that ran, oldest first.

    A call the log shows as refused or never run (its result begins "Not run") is left out, as the agent
    leaves it out; a refusal worded otherwise (the human's own message) cannot be told from a tool's error.
    """
    from mini_agent.context.call_lines import call_line
    from mini_agent.tools.base import ToolError, ToolResult

    logged = [entry["line"] for entry in entries if entry["type"] == "activity"]
    if logged:
        return logged[-limit:]
    # Files written before the lines were logged: rebuilt from the calls and results, without times.

    results: dict[str, dict] = {}
    messages = [entry["message"] for entry in entries if entry["type"] == "message"]
    for message in messages:
        if message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = block
    lines: list[str] = []
    for message in reversed(messages):
        if message["role"] != "assistant":
            continue
        for call in reversed(tool_uses(message)):
            result, tool = results.get(call["id"]), registry.get(call["name"])
            if result is None or tool is None:
                continue
            content, is_error = result.get("content"), bool(result.get("is_error"))
            if not isinstance(content, str) or (is_error and content.startswith(NOT_RUN)):
                continue
            try:
                arguments = tool.validate(call.get("input"))
            except ToolError:
                continue
            lines.append(call_line(tool.name, arguments, ToolResult(content, is_error)))
            if len(lines) == limit:
                return lines[::-1]
    return lines[::-1]


def size_anchor(entries: list[dict]) -> tuple[Usage, int] | None:
    """The last reply's usage and how many view messages it covered, unless a compaction came after it."""
    last = next((i for i in range(len(entries) - 1, -1, -1) if entries[i]["type"] == "usage"), None)
    if last is None or any(entry["type"] == "compaction" for entry in entries[last:]):
        return None
    covered = len(Session.restore(entries[: last + 1]).messages)
    following = next((entry for entry in entries[last + 1 :] if entry["type"] != "hints"), None)
    if following is not None and following["type"] == "message" and following["message"]["role"] == "assistant":
        covered += 1  # the reply that reported the usage
    return Usage(**entries[last]["usage"]), covered


def settle_unanswered_calls(session: Session) -> None:
    """Give each tool call the last reply left without a result an error result (a crash mid-call)."""
    messages = session.messages
    if messages and messages[-1]["role"] == "assistant":
        calls = tool_uses(messages[-1])
        if calls:
            session.append({"role": "user", "content": [tool_result(c["id"], UNANSWERED, True) for c in calls]})
