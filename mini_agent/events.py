"""What the core tells the outside world: frozen events passed to an `emit` callable.

The core never touches the terminal; renderers (rich, plain text, json, stream-json) consume these. A layer
whose event carries its own types declares that event itself (context/reports.py's `ContextInjected`), so this
module sits low enough for every emitter: it names only tools', safety's and usage's types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mini_agent.safety.denials import Denial
    from mini_agent.tools.base import Tool, ToolResult
    from mini_agent.usage import Usage


@dataclass(frozen=True)
class TextDelta:
    """A piece of the assistant's text as it streams in."""

    text: str


@dataclass(frozen=True)
class Thought:
    """A thinking block of the reply being streamed ended (shown folded; the full text is the model's)."""

    text: str
    redacted: bool = False
    """The provider sent it encrypted (`redacted_thinking`): nothing to show."""


@dataclass(frozen=True)
class ReplyDiscarded:
    """A reply attempt failed part-way; whatever it streamed so far is void and the request is retried."""

    reason: str
    attempt: int
    delay: float
    repeated: bool = False
    """The previous attempt failed for the very same reason: a person is told so in a few words."""

    def retrying(self) -> str:
        """The reason (or that it is the same again), a full stop, and when the next attempt goes out."""
        if self.repeated:
            return f"The same again. Retrying in {self.delay:.1f}s"
        stop = "" if self.reason.rstrip().endswith((".", "!", "?")) else "."
        return f"{self.reason.rstrip()}{stop} Retrying in {self.delay:.1f}s"


@dataclass(frozen=True)
class AssistantMessage:
    """A complete reply, exactly as appended to the transcript."""

    message: dict
    stop_reason: str | None
    usage: Usage
    step: int
    id: str | None = None
    """The endpoint's id of the message, when it gave one."""
    model: str | None = None
    """The model that answered."""


@dataclass(frozen=True)
class ToolStarted:
    tool_use_id: str
    name: str
    input: Any
    tool: Tool | None = field(default=None, compare=False, repr=False)
    """The tool called, whose facts (key argument, whether it edits files) say how to show the call; None for a
    name no tool has."""


@dataclass(frozen=True)
class ToolFinished:
    tool_use_id: str
    name: str
    input: Any
    result: ToolResult
    duration: float
    tool: Tool | None = field(default=None, compare=False, repr=False)
    """As ToolStarted's."""


@dataclass(frozen=True)
class ToolDenied:
    """A call was refused (by the policy, a rule, plan mode, or a human); follows the call's ToolFinished."""

    tool_use_id: str
    name: str
    input: Any
    denial: Denial
    tool: Tool | None = field(default=None, compare=False, repr=False)
    """As ToolStarted's."""


@dataclass(frozen=True)
class HintChanged:
    """A runtime hint (system-prompt segment 3) was set, or removed when text is None."""

    key: str
    text: str | None


@dataclass(frozen=True)
class Notice:
    """Something the human should know that is not the model's words (a refusal, a cut reply)."""

    text: str


@dataclass(frozen=True)
class HookRan:
    """A hook ran (shown with --trace): which, for what, how it ended and what that meant."""

    event: str
    hook: str
    """The hook as its config writes it: event, matcher, command."""
    subject: str | None
    """The tool name or compaction trigger it ran for."""
    exit_code: int | None
    seconds: float
    outcome: str
    """"ok", "context" (its output was added), "blocked", or why it failed ("exit 1", "timed out after 60 s")."""


@dataclass
class CompactionReport:
    """What one compaction did; shown to the human, kept in the trace and in the session log."""

    trigger: str
    """auto, manual, overflow (the API said too long) or context (the P0 blocks did not fit)."""
    before: int
    after: int = 0
    stages: list[str] = field(default_factory=list)
    summarised_messages: int = 0
    restored_instructions: int = 0
    error: str | None = None
    zone: str | None = None
    """For `auto`: how full the window was (context/keeper.py CHEAP_SHARE): `cheap` (50-80 %: stubs and cuts, no
    model call), `summary` (over 80 %: the history summarised) or `danger` (over 95 %: P2 context blocks dropped
    and P1 ones shrunk first)."""

    def to_dict(self) -> dict:
        return {
            "trigger": self.trigger,
            "zone": self.zone,
            "tokens_before": self.before,
            "tokens_after": self.after,
            "stages": self.stages,
            "summarised_messages": self.summarised_messages,
            "restored_instructions": self.restored_instructions,
            "error": self.error,
        }


@dataclass(frozen=True)
class Compacted:
    """The conversation was compacted (or a compaction was attempted: see report.error)."""

    report: CompactionReport


@dataclass(frozen=True)
class ModelSwitched:
    """The agent uses another model from the next request on (/model, a custom command's turn)."""

    model: str


@dataclass(frozen=True)
class SubAgentEvent:
    """An event of a sub-agent the `task` tool started, wrapped so renderers can show it nested and compact."""

    agent_id: str
    """Unique within the session: tells apart sub-agents running side by side."""
    name: str
    """The named agent, or "task" for the general-purpose one."""
    description: str
    event: Any
    """The sub-agent's own event (any of `Event`, never a TextDelta)."""


Event = (
    TextDelta
    | ReplyDiscarded
    | AssistantMessage
    | ToolStarted
    | ToolFinished
    | ToolDenied
    | HintChanged
    | Notice
    | HookRan
    | Compacted
    | ModelSwitched
    | SubAgentEvent
)
Emit = Callable[[Event], None]
