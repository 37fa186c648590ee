"""Context blocks: what the agent tells the model beside the user's words, by priority, under a budget.

A source (project instructions, git state, ...) or an enricher (an `@path` mention, a relative date) produces
blocks. `fit` keeps every P0 block and fills the rest of the budget with P1, then P2. Each block is sent as
its own tagged text block beside the user's text, never mixed into it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from mini_agent.xmltext import quoteattr, unescape

P0, P1, P2 = 0, 1, 2
"""P0 is never dropped; P2 goes first when the budget is tight."""

FOREVER = float("inf")
CONTEXT_OPEN = "<context name="


@dataclass(frozen=True)
class ContextBlock:
    name: str
    """Unique within a turn; the same name in a later turn is the same block, re-sent only if its text changed."""
    priority: int
    text: str
    """Already formatted; user-derived parts already XML-escaped by whoever produced it."""
    tokens: int = 0
    """Estimated tokens of the rendered block (filled in by the gatherer)."""
    ttl: float = 0.0
    """Seconds the source's value stays fresh: 0 recomputes every turn, FOREVER keeps it for the session."""

    def render(self) -> str:
        # The text's producers escaped what came from outside (Source.escaped, the enrichers); a literal closing
        # tag is defused once more here, so no producer's slip can end the block early.
        body = self.text.replace("</context>", "&lt;/context>")
        return f'{CONTEXT_OPEN}{quoteattr(self.name)} priority="P{self.priority}">\n{body}\n</context>'


@dataclass(frozen=True)
class TurnInput:
    """A read-only snapshot of what sources and enrichers may look at; safe to share between threads."""

    text: str
    """The user's message exactly as typed."""
    cwd: Path
    now: datetime
    """Local time, timezone-aware."""
    user_dir: Path
    """User-level files: AGENTS.md, memory.md."""
    recent_files: tuple[Path, ...] = ()
    """Files the agent read or changed, most recent first."""
    recent_calls: tuple[str, ...] = ()
    """The last tool calls, one line each, oldest first."""
    stdin: str | None = None
    """Piped input attached to this turn, already escaped and capped."""
    attached: frozenset[str] = frozenset()
    """The `@` mentions attached as images (context/images.py): the mentions enricher leaves them out."""
    session_started: float = float("inf")
    """When the session began (epoch seconds): an instruction file changed since is not the user's word."""
    data_dir: Path | None = None
    """Where what the agent wrote into instruction files is remembered (context/instruction_trust.py)."""


class Skip(Exception):
    """A source or enricher has nothing to add; the message says why (shown in the trace)."""


@dataclass(frozen=True)
class Source:
    """Produces one block's text from the turn input; cached for `ttl` seconds."""

    name: str
    priority: int
    produce: Callable[[TurnInput], str | None]
    ttl: float = 0.0
    inline: bool = False
    """Pure and cheap (no I/O): runs in the caller's thread instead of the pool."""
    stale_after: frozenset[str] = frozenset()
    """Tool risks (write, exec, ...) after which a cached value must be recomputed."""
    watched_names: frozenset[str] = frozenset()
    """File names whose write or edit makes a cached value stale wherever the file is (AGENTS.md, memory.md)."""
    escaped: bool = False
    """The text is already XML-escaped (piped input is escaped when attached). Every other source's text is
    escaped when its block is made: what a file, a command or a commit message says can never look like one of
    our tags (`<context name="project_instructions" priority="P0">` in a file arrives as `&lt;context ...`)."""


@dataclass(frozen=True)
class Enricher:
    """Reads the user's message and may return blocks; never changes the message itself."""

    name: str
    enrich: Callable[[TurnInput], list[ContextBlock]]
    inline: bool = False
    needs: str | None = None
    """A string the message must contain for this enricher to have anything to do (`@` for mentions): checked
    in the caller's thread, so a message without it costs no thread at all."""


@dataclass(frozen=True)
class Fitted:
    kept: list[ContextBlock]
    dropped: list[ContextBlock]
    over_budget: bool
    """Even the P0 blocks alone exceed the budget (they are kept anyway)."""


def fit(blocks: list[ContextBlock], budget: int) -> Fitted:
    """Keep every P0 block, then P1, then P2 blocks in order while they fit in what is left of the budget."""
    kept = [block for block in blocks if block.priority == P0]
    used = sum(block.tokens for block in kept)
    dropped: list[ContextBlock] = []
    for priority in (P1, P2):
        for block in blocks:
            if block.priority != priority:
                continue
            if used + block.tokens <= budget:
                kept.append(block)
                used += block.tokens
            else:
                dropped.append(block)
    order = {id(block): index for index, block in enumerate(blocks)}
    kept.sort(key=lambda block: order[id(block)])
    return Fitted(kept, dropped, over_budget=sum(b.tokens for b in blocks if b.priority == P0) > budget)


def is_injected(block: dict) -> bool:
    """Whether a content block was added by the agent rather than typed by the user."""
    return block.get("type") == "text" and block.get("text", "").startswith(CONTEXT_OPEN)


@dataclass
class Ledger:
    """What each block looked like when last sent, so unchanged blocks are not sent again.

    Keyed by name, holding the block as rendered: the very text the model saw, which is also what a stored
    transcript holds, so a resumed session rebuilds the ledger exactly from its messages.
    """

    sent: dict[str, str] = field(default_factory=dict)

    def is_new(self, block: ContextBlock) -> bool:
        return self.sent.get(block.name) != block.render()

    def mark(self, block: ContextBlock) -> None:
        self.sent[block.name] = block.render()

    def forget(self) -> None:
        """After compaction the earlier blocks are gone from the model's view: everything is new again."""
        self.sent.clear()

    def keep(self, names: Iterable[str]) -> None:
        """Forget every block but these (a compaction that showed them again)."""
        wanted = set(names)
        self.sent = {name: rendered for name, rendered in self.sent.items() if name in wanted}

    def rebuild(self, messages: Iterable[dict]) -> None:
        """Mark every context block found in these messages as sent, in order (a later one wins)."""
        for message in messages:
            content = message.get("content")
            for block in content if isinstance(content, list) else ():
                if is_injected(block):
                    self.mark_rendered(block["text"])

    def mark_rendered(self, rendered: str) -> bool:
        """Mark a block as the transcript holds it (`ContextBlock.render`'s output); False if it is not one."""
        header = Ledger.header(rendered)
        if header is None:
            return False
        self.sent[header[0]] = rendered
        return True

    def priority(self, name: str) -> int | None:
        """The priority the block of this name was sent with; None when it was not sent."""
        rendered = self.sent.get(name)
        header = Ledger.header(rendered) if rendered is not None else None
        return header[1] if header else None

    @staticmethod
    def header(rendered: str) -> tuple[str, int] | None:
        """Name and priority of a rendered block: the inverse of the first line `ContextBlock.render` writes."""
        if not rendered.startswith(CONTEXT_OPEN) or not rendered.endswith("\n</context>"):
            return None
        line = rendered[len(CONTEXT_OPEN) : rendered.find("\n")]
        quoted, _, priority = line.rpartition(" priority=")
        # quoteattr escapes newlines, so the first line is the whole opening tag; the name is its first attribute.
        if len(quoted) < 2 or quoted[0] != quoted[-1] or quoted[0] not in "\"'":
            return None
        if priority not in ('"P0">', '"P1">', '"P2">'):
            return None
        # Beyond &, < and > (which `unescape` undoes by itself), quoteattr escapes quotes and whitespace.
        return unescape(quoted[1:-1], {"&quot;": '"', "&#10;": "\n", "&#13;": "\r", "&#9;": "\t"}), int(priority[2])
