"""The conversation: the model's view of the transcript, the full log, the turn's request, hints, usage.

`messages` is what the next request sends. `log` is append-only and keeps everything: each message as it was
added (a user turn with the words as typed beside it), each reply's usage, each change of the runtime hints and,
at each compaction, a marker holding the compacted view and its summary. Nothing is lost, and
`Session.restore(log)` rebuilds the exact session a resumed run must continue from. `attach` sends every new
entry to a sink (the session file) the moment it is logged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mini_agent.instructions import explicit_instructions
from mini_agent.model.messages import MessageParam, without_images
from mini_agent.model.wellformed import safe
from mini_agent.usage import Usage

if TYPE_CHECKING:
    from mini_agent.tools.todo_list import Todo

SUMMARY_HINT = "context_summary"
ERROR_CHARS = 1000
"""An error entry stays short, so a listing finds it within the last few KiB of the file."""

Sink = Callable[[dict], None]


@dataclass
class Session:
    messages: list[MessageParam] = field(default_factory=list)
    request: str = ""
    """The user's own words for the current turn, verbatim."""
    hints: dict[str, str] = field(default_factory=dict)
    """Runtime hints for system-prompt segment 3, one per key so a new one replaces its predecessor."""
    usage: Usage = field(default_factory=Usage)
    """Tokens of every reply in the session, summed."""
    last_usage: Usage | None = None
    """The latest reply's usage: the exact size of the conversation at that point."""
    instructions: list[str] = field(default_factory=list)
    """Every explicit instruction the user typed, verbatim, in order: compaction must keep them all."""
    log: list[dict] = field(default_factory=list)
    """Append-only record: "message", "usage", "hints", "activity", "compaction", "images_removed" and "todos"
    entries, in order."""
    compactions: int = 0
    model: str = field(default="", compare=False)
    """The model the replies come from now (the agent's, `record_model` after a switch): usage is counted by it."""
    todos: tuple[Todo, ...] = field(default=(), compare=False)
    """The agent's todo list as its last todo_write set it."""
    usage_by_model: dict[str, Usage] = field(default_factory=dict, compare=False)
    """`usage` by the model that spent it, sub-agents' included, so a session that switched models is priced right."""
    _sink: Sink | None = field(default=None, init=False, repr=False, compare=False)
    _logged_hints: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)
    """The hints as the log last recorded them; a change is logged before the next message."""
    _view_is_logged: bool = field(default=False, init=False, repr=False, compare=False)
    """`messages` is the very list a compaction entry holds: copy it before changing it."""

    def attach(self, sink: Sink | None) -> None:
        """Also send every entry logged from now on to `sink` (a session file), at once and in order."""
        self._sink = sink

    def begin_turn(self, text: str, blocks: list[dict] | tuple = ()) -> None:
        """Record what the user typed, as typed, with injected context as separate blocks after it."""
        self.request = text
        for instruction in explicit_instructions(text):
            if instruction not in self.instructions:
                self.instructions.append(instruction)
        # `typed` holds the user's words apart from the injected context, first so a listing finds it early.
        self._append({"role": "user", "content": [{"type": "text", "text": text}, *blocks]}, {"typed": text})

    def append(self, message: MessageParam) -> None:
        self._append(message, {})

    def replace_view(self, messages: list[MessageParam], summary_hint: str | None, detail: dict) -> None:
        """Compaction: the model sees `messages` from now on; the log keeps the full history and a marker."""
        self.compactions += 1
        messages = safe(messages)
        if summary_hint is not None:
            self.hints[SUMMARY_HINT] = summary_hint
        self.messages = messages
        self._view_is_logged = True
        self._logged_hints = dict(self.hints)
        self._log(
            {
                "type": "compaction",
                "view": messages,
                "summary_hint": self.hints.get(SUMMARY_HINT),
                "instructions": list(self.instructions),
                "hints": dict(self.hints),
                **detail,
            }
        )

    def drop_images(self, note: str) -> int:
        """Replace every image the model would be sent by a text block saying `note` (an endpoint that takes
        none), logged so a resumed session sends the same; how many there were."""
        messages, replaced = without_images(self.messages, note)
        if replaced:
            self.messages, self._view_is_logged = messages, False
            self._log({"type": "images_removed", "note": note})
        return replaced

    def record_usage(self, usage: Usage) -> None:
        self.usage = self.usage + usage
        self.last_usage = usage
        self._count(self.model, usage)
        self._log({"type": "usage", "usage": usage.to_dict()})

    def record_subagent(self, entry: dict, usage: Usage) -> None:
        """A sub-agent's run (its transcript under "log"): its tokens count in the session's, and resuming the
        session skips it, for the model never saw it."""
        self.usage = self.usage + usage
        self._count(str(entry.get("model") or self.model), usage)
        self._log({"type": "subagent", **entry, "usage": usage.to_dict()})

    def record_error(self, kind: str, message: str) -> None:
        """An error ended the turn (`kind`: api, step_limit, overflow, error): kept so a resumed session and the
        listing can say why the last turn stopped."""
        self._log({"type": "turn_error", "kind": kind, "message": message[:ERROR_CHARS]})

    def record_model(self, model: str) -> None:
        """The session switched models (/model, a resumed session run with another): later usage is that model's."""
        self.model = model
        self._log({"type": "model", "model": model})

    def record_todos(self, todos: tuple[Todo, ...]) -> None:
        """The todo list replaced (todo_write): logged, so a resumed session shows the same list."""
        self.todos = todos
        self._log({"type": "todos", "todos": [todo.to_dict() for todo in todos]})

    def _count(self, model: str, usage: Usage) -> None:
        self.usage_by_model[model] = self.usage_by_model.get(model, Usage()) + usage

    def record_call(self, line: str) -> None:
        """A tool call's recent-activity line (with its time), so a resumed session shows the very same block."""
        self._log({"type": "activity", "line": line})

    def _append(self, message: MessageParam, extra: dict) -> None:
        # Every message enters the conversation here: text that is not valid Unicode (a file name decoded with
        # surrogateescape, in a listing or a hint) is made sendable once, before it is logged or sent.
        message, extra = safe(message), safe(extra)
        if self.hints != self._logged_hints:
            # Hints change between messages (a tool marked degraded while its results were built); logged
            # before the message, so a restored session sends the next request with the same system prompt.
            self._logged_hints = dict(self.hints)
            self._log({"type": "hints", "hints": dict(self.hints)})
        self._log({"type": "message", **extra, "message": message})
        if self._view_is_logged:
            self.messages, self._view_is_logged = list(self.messages), False
        _append_merged(self.messages, message)

    def _log(self, entry: dict) -> None:
        self.log.append(entry)
        if self._sink is not None:
            self._sink(entry)

    @classmethod
    def restore(cls, log: list[dict], model: str = "") -> Session:
        """The session a log describes: the last compacted view plus everything appended after it. `model`: the
        one it began with (the file's header), until a `model` entry says otherwise."""
        session = cls(log=list(log), model=model)
        for entry in log:
            kind = entry["type"]
            if kind == "message":
                message = entry["message"]
                _append_merged(session.messages, message)
                typed = entry.get("typed")
                if typed is not None:
                    session.request = typed
                    for instruction in explicit_instructions(typed):
                        if instruction not in session.instructions:
                            session.instructions.append(instruction)
            elif kind == "usage":
                usage = Usage(**entry["usage"])
                session.usage, session.last_usage = session.usage + usage, usage
                session._count(session.model, usage)
            elif kind == "subagent":
                usage = Usage(**entry["usage"])
                session.usage = session.usage + usage
                session._count(str(entry.get("model") or session.model), usage)
            elif kind == "model":
                session.model = str(entry["model"])
            elif kind == "todos":
                # Here: the tools package (its registry) would otherwise load before --continue's first prompt.
                from mini_agent.tools.todo_list import todos_from

                session.todos = todos_from(entry.get("todos"))
            elif kind == "images_removed":
                session.messages = without_images(session.messages, entry["note"])[0]
            elif kind == "hints":
                session.hints = dict(entry["hints"])
            elif kind == "compaction":
                session.messages = list(entry["view"])
                session.compactions += 1
                if "hints" in entry:
                    session.hints = dict(entry["hints"])
                elif entry.get("summary_hint"):
                    session.hints[SUMMARY_HINT] = entry["summary_hint"]
                session.instructions = list(entry.get("instructions", session.instructions))
        session._logged_hints = dict(session.hints)
        return session


def _append_merged(messages: list[MessageParam], message: MessageParam) -> None:
    last = messages[-1] if messages else None
    if last is not None and last["role"] == message["role"] == "user":
        # The previous turn ended without a reply to its last user message (interrupted, cut, refused): fold
        # the new blocks into it so roles keep alternating on every endpoint. A new dict, so the log's copy
        # of the earlier message stays as it was.
        messages[-1] = {**last, "content": [*_blocks(last), *_blocks(message)]}
    else:
        messages.append(message)


def _blocks(message: MessageParam) -> list:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
