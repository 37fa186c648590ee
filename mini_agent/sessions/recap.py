"""What `--continue` and `/resume` show of a stored session: its last exchanges (the user's words and the answer),
why its last turn stopped, when an error ended it, and where its todo list stands."""

from __future__ import annotations

from dataclasses import dataclass

EXCHANGES_SHOWN = 2
WORDS_CHARS = 300
ANSWER_CHARS = 600
ANSWER_LINES = 8
ERROR_KINDS = {
    "api": "the model's endpoint failed",
    "step_limit": "the step limit was reached",
    "overflow": "the conversation no longer fit the context window",
    "error": "an error",
}


@dataclass(frozen=True)
class Exchange:
    typed: str
    answer: str
    """The text of the turn's last reply; "" when none came."""
    error: str = ""
    """Why the turn stopped, when an error ended it (the entry the agent logged)."""


def last_exchanges(entries: list[dict], count: int = EXCHANGES_SHOWN) -> list[Exchange]:
    """The last `count` turns of a session's log, oldest first. Only the tail of the log is walked."""
    turns: list[dict] = []
    for entry in reversed(entries):
        kind = entry.get("type")
        if kind == "turn_error" and not turns:
            turns.append({"error": entry})
        elif kind == "message":
            message = entry["message"]
            if not turns or "typed" in turns[-1]:
                turns.append({})
            if message.get("role") == "assistant" and "answer" not in turns[-1]:
                turns[-1]["answer"] = _text(message)
            if "typed" in entry:
                turns[-1]["typed"] = entry["typed"]
                if len(turns) == count:
                    break
    found = [turn for turn in turns if "typed" in turn]
    return [
        Exchange(turn["typed"], turn.get("answer", ""), _error_text(turn.get("error")))
        for turn in reversed(found[:count])
    ]


def recap_lines(exchanges: list[Exchange]) -> list[str]:
    lines: list[str] = []
    for exchange in exchanges:
        lines.append("› " + _cut(exchange.typed, WORDS_CHARS, 3))
        if exchange.answer:
            lines.append(_cut(exchange.answer, ANSWER_CHARS, ANSWER_LINES))
        if exchange.error:
            lines.append(f"The turn stopped: {exchange.error}")
        elif not exchange.answer:
            lines.append("(no answer)")
    return lines


def todo_line(entries: list[dict]) -> str | None:
    """Where the session's todo list stands (`/todos` shows it whole); None without a list or with all of it done."""
    stored = next((entry for entry in reversed(entries) if entry.get("type") == "todos"), None)
    if stored is None:
        return None  # without importing the tools package: this runs before --continue's first prompt
    from mini_agent.tools.todo_list import todos_from

    todos = todos_from(stored.get("todos"))
    done = sum(todo.status == "completed" for todo in todos)
    if done == len(todos):
        return None
    busy = next((todo for todo in todos if todo.status == "in_progress"), None)
    doing = f", in progress: {_cut(busy.active_form or busy.content, WORDS_CHARS, 1)}" if busy else ""
    return f"Todo list: {done} of {len(todos)} done{doing} (/todos shows it)"


def stop_label(kind: str) -> str:
    """The mark a listing gives a session whose last turn an error ended."""
    return f"[stopped: {ERROR_KINDS.get(kind, ERROR_KINDS['error'])}]"


def _error_text(entry: dict | None) -> str:
    if entry is None:
        return ""
    return str(entry.get("message") or ERROR_KINDS.get(entry.get("kind", ""), "an error"))


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content.strip()
    return "\n".join(b.get("text", "") for b in content or () if b.get("type") == "text").strip()


def _cut(text: str, chars: int, lines: int) -> str:
    kept = text.strip().splitlines()
    shown = "\n".join(kept[:lines])
    if len(shown) > chars:
        shown = shown[: chars - 1].rstrip()
    return shown + (" …" if shown != text.strip() else "")
