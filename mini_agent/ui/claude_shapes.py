"""stream-json's records in Claude Code's shapes, where the two overlap: scripts written for
`claude -p --output-format stream-json --verbose` read them alike.

Claude Code's stream is `system` (subtype `init`), then `assistant` records carrying the API's message and `user`
records carrying tool results, each with `session_id`, `parent_tool_use_id` (the `task` call a sub-agent's record
belongs to; null for the main agent's) and a `uuid`, and a `result` last. mini-agent's own records (`tool_call`,
`tool_result`, `notice`, ...) stay beside them: docs/output.md lists both.
"""

from __future__ import annotations

import uuid

from mini_agent.events import AssistantMessage, ToolFinished

PERMISSION_MODES = {"default": "default", "accept-edits": "acceptEdits", "plan": "plan", "bypass": "bypassPermissions"}
"""Claude Code's names for the modes it shares; `auto` has none and keeps its own."""


def permission_mode(mode: str) -> str:
    return PERMISSION_MODES.get(mode, mode)


def stamp(record: dict, session_id: str | None, parent: str | None) -> dict:
    """The fields every Claude Code record has beside its own."""
    return {**record, "parent_tool_use_id": parent, "session_id": session_id, "uuid": str(uuid.uuid4())}


def api_message(event: AssistantMessage) -> dict:
    """The reply as the Messages API returns it (`id`, `type`, `role`, `model`, `content`, `stop_reason`,
    `stop_sequence`, `usage`): Claude Code's `assistant.message`. The content is the reply as kept in the
    history, thinking blocks and signatures included."""
    return {
        "id": event.id or f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": event.model,
        "content": event.message.get("content") or [],
        "stop_reason": event.stop_reason,
        "stop_sequence": None,
        "usage": event.usage.to_dict(),
    }


def user_record(event: ToolFinished) -> dict:
    """A tool's result as the user message that carries it back to the model (Claude Code's `user` record).
    Images the result held are named by the `tool_result` record; their bytes stay out of the stream."""
    block = {
        "type": "tool_result",
        "tool_use_id": event.tool_use_id,
        "content": event.result.content,
        "is_error": event.result.is_error,
    }
    return {"type": "user", "message": {"role": "user", "content": [block]}}
