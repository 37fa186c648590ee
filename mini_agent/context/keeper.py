"""The context keeper: what goes into the conversation each turn, how big it is, and when to compact it.

It opens each turn (gather, fit, inject beside the user's words), measures the conversation before every
request from the last usage figure plus an estimate of what is new, and compacts when a threshold is passed,
when the API says the prompt is too long, or when the human asks.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mini_agent.context.blocks import Ledger, TurnInput
from mini_agent.context.compaction import Compactor
from mini_agent.context.images import AttachedImage, attached_images
from mini_agent.context.injection import ContextEngine, TurnTrace
from mini_agent.context.reports import ContextInjected, ImagesAttached
from mini_agent.context.tokens import ConversationSize, count, count_messages
from mini_agent.conversation import Session
from mini_agent.events import Compacted, CompactionReport, Emit, Notice
from mini_agent.settings import Settings
from mini_agent.usage import Usage

if TYPE_CHECKING:
    from mini_agent.model import Provider

MAX_FAILED_COMPACTIONS = 3
KEEP_SHARE = 0.5
"""After compaction, aim for this share of the threshold, so the next one is a long way off."""
CHEAP_SHARE = 0.5
DANGER_SHARE = 0.95
CHEAP_STEP = 0.1
"""The zones of the window (seed 004 §6.2), with the threshold (0.8 by default) between the middle two: below
CHEAP_SHARE nothing is done; from it to the threshold the cheap stage runs (old tool results stubbed: no model
call, nothing lost that a tool call cannot bring back), again only once the conversation grew by another
CHEAP_STEP of the window, since every change to old messages costs the prompt cache; from the threshold the
history is summarised; over DANGER_SHARE the P2 context blocks are dropped and the P1 ones shrunk before anything
else."""


class ContextKeeper:
    def __init__(
        self,
        engine: ContextEngine,
        compactor: Compactor,
        settings: Settings,
        window: Callable[[], int],
        overhead: Callable[[], int],
        *,
        images: bool = False,
    ) -> None:
        """`images`: attach the images the user names (`@shot.png`, pasted paths, `--image`) to the turn's
        message; off for sub-agents, whose briefs the model writes and whose files it reads under the policy."""
        self.engine, self.compactor, self.settings = engine, compactor, settings
        self.images = images
        self.window, self.overhead = window, overhead
        self.size = ConversationSize()
        self.started = time.time()
        """The session's start: instruction files changed after it are shown as data (instruction_text.py)."""
        self.failures = 0
        self.trace: TurnTrace | None = None
        self._cheap_from = 0
        """The size at which the cheap stages may run again."""

    # ---- a turn --------------------------------------------------------------------------------------

    def prefetch(self, cwd: Path) -> None:
        """Set the cached sources (git, instruction files, memory) going for a turn in `cwd`, so that the next
        turn finds their answers: the REPL calls it once the agent is built, while the user types."""
        self.engine.gatherer.prefetch(self._input("", cwd))

    def _input(self, text: str, cwd: Path, **turn) -> TurnInput:
        """What sources and enrichers may read; `turn`: the turn's recent files and calls, stdin, images."""
        now, settings = datetime.now().astimezone(), self.settings
        return TurnInput(
            text, cwd, now, settings.user_dir, session_started=self.started, data_dir=settings.data_dir, **turn
        )

    def open_turn(
        self,
        session: Session,
        text: str,
        stdin: str | None,
        cwd: Path,
        recent_files: tuple[Path, ...],
        recent_calls: tuple[str, ...],
        emit: Emit,
        notes: list[str] | tuple[str, ...] = (),
        images: tuple[AttachedImage, ...] = (),
        pasted: bool = False,
    ) -> TurnTrace:
        """Gather and place this turn's context, then record the user's message with the new blocks beside it.

        `notes` are system hints for this turn only (e.g. that the user undid the last turn's changes). `images`
        are read already (`--image`), attached beside the `@` mentions of images; `pasted`: absolute paths of
        images in the text are attached too (a file dragged into the REPL).
        """
        attached = attached_images(text, cwd, images, pasted) if self.images else []
        labels = frozenset(image.label for image in attached)
        inp = self._input(text, cwd, recent_files=recent_files, recent_calls=recent_calls, stdin=stdin, attached=labels)
        prepared = self.engine.prepare(inp, self.window())
        self.trace = prepared.trace
        if prepared.over_budget and session.messages:
            self._compact(session, "context", emit)
        blocks = [{"type": "text", "text": block.render()} for block in prepared.send]
        blocks += [{"type": "text", "text": note} for note in notes]
        blocks += [block for image in attached for block in image.blocks()]
        session.begin_turn(text, blocks)
        self.engine.sent(prepared.send)
        if attached:
            emit(ImagesAttached(tuple(attached)))
        emit(ContextInjected(prepared.trace))
        return prepared.trace

    def measure(self, session: Session) -> int:
        return self.size.measure(session.messages, self.overhead())

    def before_request(self, session: Session, emit: Emit) -> None:
        """Compact by the zone the conversation is in (CHEAP_SHARE); cheap: only new messages are estimated."""
        threshold = self.threshold()
        if not threshold or self.failures >= MAX_FAILED_COMPACTIONS:
            return
        size, window = self.measure(session), self.window()
        if size > max(threshold, window * DANGER_SHARE):
            self._compact(session, "auto", emit, zone="danger")
        elif size > threshold:
            self._compact(session, "auto", emit, zone="summary")
        elif size > min(threshold, window * CHEAP_SHARE) and size >= self._cheap_from:
            self._cheap_from = size + int(window * CHEAP_STEP)
            self._compact(session, "auto", emit, zone="cheap")

    def after_reply(self, usage: Usage | None, session: Session) -> None:
        """`usage` None: the endpoint did not report it, and the size stays an estimate."""
        if usage is not None:
            self.size.observe(usage, len(session.messages))

    def forget(self) -> None:
        """A new conversation (/clear): nothing sent before counts as sent, no size is anchored, no cache is kept."""
        self.engine.ledger = Ledger()
        self.engine.gatherer.forget()
        self.size.reset()
        self.trace = None

    def resume(self, ledger: Ledger, anchor: tuple[Usage, int] | None) -> None:
        """A stored conversation continued: the blocks its log shows were sent, and the size its last reply
        measured (None when a compaction came after it)."""
        self.engine.ledger = ledger
        if anchor is not None:
            self.size.observe(*anchor)

    def use_model(self, model: str) -> None:
        """The session switched models: summaries are written by the new one, unless compact_model names one."""
        self.settings = replace(self.settings, model=model)
        self.compactor.model = self.settings.compact_model or model

    def overflowed(self, session: Session, emit: Emit) -> bool:
        """The API said the prompt is too long: compact hard. Whether the conversation got any smaller."""
        report = self._compact(session, "overflow", emit, target=self.measure(session) // 2)
        return report.after < report.before

    def compact_now(self, session: Session, emit: Emit, focus: str | None = None) -> CompactionReport:
        """Manual compaction (`/compact [focus]`): summarise whatever is older than the latest exchange."""
        if not session.messages:
            report = CompactionReport("manual", 0, error="the conversation is empty")
            emit(Compacted(report))
            return report
        return self._compact(session, "manual", emit, focus=focus)

    def threshold(self) -> int:
        return int(self.window() * self.settings.compact_threshold)

    # ---- compaction ----------------------------------------------------------------------------------

    def _compact(
        self,
        session: Session,
        trigger: str,
        emit: Emit,
        target: int | None = None,
        focus: str | None = None,
        zone: str | None = None,
    ) -> CompactionReport:
        threshold = self.threshold() or self.window()
        goal = int(threshold * KEEP_SHARE)
        target = min(goal, target) if target is not None else goal
        if zone == "cheap":
            target = int(min(threshold, self.window() * CHEAP_SHARE))  # out of the cheap zone, no further
        # A manual compaction keeps only the latest exchange verbatim; an automatic one keeps what fits in
        # half the goal, so recent work stays word for word.
        keep = 0 if trigger == "manual" else goal // 2
        overhead = self.overhead()

        def measure(messages: list[dict]) -> int:
            return round((count_messages(messages) + overhead) * self.size.ratio)

        report = self.compactor.compact(
            session,
            measure,
            target,
            self.engine.p0,
            trigger,
            emit,
            focus=focus,
            keep_tokens=keep,
            size=self.measure(session),
            zone=zone,
        )
        if zone == "cheap":  # no summary asked for: nothing failed, and nothing to tell unless it did something
            if report.stages:
                self.size.reset()
                self._record(report, emit)
            return report
        if report.stages:
            self.size.reset()
            self.engine.compacted()
        failed = trigger != "manual" and (not report.stages or report.after > threshold)
        if trigger != "manual" or report.stages:
            self.failures = self.failures + 1 if failed else 0
        self._record(report, emit)
        if failed and self.failures == MAX_FAILED_COMPACTIONS:
            emit(
                Notice(
                    f"Compaction failed {MAX_FAILED_COMPACTIONS} times in a row; automatic compaction is off for "
                    "the rest of this session. The conversation may hit the context limit: start a new session "
                    "or compact by hand."
                )
            )
        return report

    def _record(self, report: CompactionReport, emit: Emit) -> None:
        """Into the turn's trace, and told: the human sees each stage by name."""
        if self.trace is not None:
            self.trace.compactions.append(report.to_dict())
        emit(Compacted(report))


def overhead_tokens(system: list[dict], tools: list[dict]) -> int:
    """Tokens of the system prompt and tool schemas (counted once per change, not per step)."""
    return count("\n".join(block["text"] for block in system)) + count(json.dumps(tools))


class KeeperHost(Protocol):
    """What a keeper needs of the agent it serves (the agent imports this module, not the reverse)."""

    settings: Settings
    provider: Provider

    def input_window(self) -> int: ...

    def overhead(self) -> int: ...


def minimal_keeper(agent: KeeperHost) -> ContextKeeper:
    """Piped input as the only context source, no enrichers; compaction per the settings (library use, tests)."""
    from mini_agent.context.gather import Gatherer

    settings = agent.settings
    from mini_agent.context.sources import default_sources

    piped = [source for source in default_sources() if source.name == "stdin"]
    return ContextKeeper(
        ContextEngine(Gatherer(piped, []), settings.context_budget),
        Compactor(agent.provider, settings.compact_model or settings.model, settings.compact_focus),
        settings,
        agent.input_window,
        agent.overhead,
    )


SUBAGENT_SOURCES = ("project_instructions", "environment", "git_state", "user_memory")
"""What a sub-agent's requests carry besides its brief: the project's instructions and the user's memory (every
model call carries the context it needs), where it works and the repository's state. Not the parent's piped
input or recent activity: its brief says what of those it needs."""


def subagent_keeper(agent: KeeperHost) -> ContextKeeper:
    """The context machinery of a sub-agent: the sources above, no enrichers, compaction per the settings."""
    from mini_agent.context.gather import Gatherer
    from mini_agent.context.sources import default_sources

    settings = agent.settings
    sources = [source for source in default_sources() if source.name in SUBAGENT_SOURCES]
    return ContextKeeper(
        ContextEngine(Gatherer(sources, [], settings.context_timeout), settings.context_budget),
        Compactor(agent.provider, settings.compact_model or settings.model, settings.compact_focus),
        settings,
        agent.input_window,
        agent.overhead,
    )
