"""Run context sources and enrichers side by side, each bounded by a timeout; cache sources for their TTL.

A source or enricher that fails, times out or has nothing to say is skipped and recorded; none of that is
ever fatal. Pure, cheap ones (`inline`) run in the caller's thread; the rest run on daemon threads so one that
hangs past its timeout is abandoned without holding up the turn or the exit.

A cached source can also be set going before its turn (`Gatherer.prefetch`): what waits on processes (git)
then runs while the user types, and the turn takes its answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from mini_agent.context import tokens
from mini_agent.context.blocks import ContextBlock, Enricher, Skip, Source, TurnInput
from mini_agent.xmltext import escape

Status = Literal["applied", "cached", "skipped", "failed", "timeout"]
DEFAULT_TIMEOUT = 0.5


@dataclass(frozen=True)
class Outcome:
    """What one source or enricher did this turn, for the trace."""

    name: str
    kind: Literal["source", "enricher"]
    status: Status
    reason: str = ""
    ms: float = 0.0
    blocks: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "status": self.status,
            "reason": self.reason,
            "ms": round(self.ms, 2),
            "blocks": list(self.blocks),
        }


@dataclass
class _Cached:
    block: ContextBlock | None
    reason: str
    expires: float


@dataclass(frozen=True)
class _Early:
    """A source's run begun before its turn; `at` (the gatherer's clock) starts its TTL. A tool that makes the
    source stale drops the run with the cached values (`_drop`), so a turn never takes what it had changed."""

    runner: _Runner
    at: float


class Gatherer:
    def __init__(
        self,
        sources: list[Source],
        enrichers: list[Enricher],
        timeout: float = DEFAULT_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sources, self.enrichers, self.timeout, self.clock = sources, enrichers, timeout, clock
        self._cache: dict[tuple[str, object], _Cached] = {}
        """Keyed by source and working directory: a `cd` in bash must not serve another directory's blocks."""
        self._lock = threading.Lock()
        """The cache is also written by a source that answered after its turn's deadline (kept for the next)."""
        self._drops: dict[str, int] = {}
        """How often each source's values were dropped: a late answer begun before a drop is not kept."""
        self._early: dict[tuple[str, object], _Early] = {}
        """Runs begun before their turn (`prefetch`), keyed as the cache is; a turn takes each once."""

    def prefetch(self, inp: TurnInput) -> None:
        """Set going now the cached sources a turn in `inp.cwd` would run (neither cached nor already going), so
        that the turn finds their answers: the REPL calls it while the user types. `inp.text` is not read."""
        now = self.clock()
        for source in self.sources:
            key = (source.name, inp.cwd)
            with self._lock:
                cached = self._cache.get(key)
                if source.inline or source.ttl <= 0 or key in self._early or (cached and now < cached.expires):
                    continue
                runner = _Runner(source.name, "source", _source_job(source, inp))
                self._early[key] = _Early(runner, now)
            runner.start()

    def _take_early(self, source: Source, cwd: object, now: float) -> _Early | None:
        """The run begun early for this turn, unless it is older than its TTL."""
        with self._lock:
            early = self._early.pop((source.name, cwd), None)
        return early if early is not None and now < early.at + source.ttl else None

    def forget(self) -> None:
        """Drop every cached value (a new conversation starts from what is true now)."""
        self._drop({source.name for source in self.sources})

    def invalidate(self, risk: str, changed: Path | None = None) -> None:
        """A tool of this risk ran (and wrote `changed`): drop cached values of the sources it can make stale
        (git after a write, instruction files after any command or a write of one of them)."""
        self._drop(self._stale_after(risk, changed))

    def forget_source(self, name: str) -> None:
        """Drop one source's cached values (the agent itself changed what it reads, e.g. `/memory add`)."""
        self._drop({name})

    def _drop(self, names: set[str]) -> None:
        with self._lock:
            for name in names:
                self._drops[name] = self._drops.get(name, 0) + 1
            for key in [key for key in self._cache if key[0] in names]:
                del self._cache[key]
            for key in [key for key in self._early if key[0] in names]:
                del self._early[key]

    def _stale_after(self, risk: str, changed: Path | None) -> set[str]:
        return {
            source.name
            for source in self.sources
            if risk in source.stale_after or (changed is not None and changed.name in source.watched_names)
        }

    def gather(self, inp: TurnInput) -> tuple[list[ContextBlock], list[Outcome]]:
        """Every block this turn could inject, and what each source and enricher did, in declaration order."""
        jobs: list[tuple[str, str, Callable[[], list[ContextBlock]]]] = []
        outcomes: dict[str, Outcome] = {}
        results: dict[str, list[ContextBlock]] = {}
        now = self.clock()
        begun: dict[str, float] = {}
        """When each source's answer was asked for: its TTL counts from then."""
        running: list[_Runner] = []
        for source in self.sources:
            with self._lock:
                cached = self._cache.get((source.name, inp.cwd))
            if cached is not None and now < cached.expires:
                blocks = [cached.block] if cached.block else []
                status: Status = "cached" if cached.block else "skipped"
                outcomes[source.name] = Outcome(source.name, "source", status, cached.reason or "cached")
                results[source.name] = blocks
                continue
            early = self._take_early(source, inp.cwd, now)
            if early is not None:
                running.append(early.runner)
                begun[source.name] = early.at
                continue
            jobs.append((source.name, "source", _source_job(source, inp)))
        for enricher in self.enrichers:
            jobs.append((enricher.name, "enricher", _enricher_job(enricher, inp)))

        inline = {s.name for s in self.sources if s.inline} | {
            e.name for e in self.enrichers if e.inline or (e.needs is not None and e.needs not in inp.text)
        }
        threaded = [_Runner(*job) for job in jobs if job[0] not in inline]
        for runner in threaded:
            runner.start()
        threaded += running
        deadline = self.clock() + self.timeout
        inline_runners = [_Runner(*job) for job in jobs if job[0] in inline]
        for runner in inline_runners:
            runner.run()
        for runner in threaded:
            runner.join(max(0.0, deadline - self.clock()))
        for runner in threaded + inline_runners:
            outcomes[runner.source_name], results[runner.source_name] = runner.outcome(self.timeout)
            if runner.source_name in begun and outcomes[runner.source_name].status == "applied":
                outcomes[runner.source_name] = replace(outcomes[runner.source_name], reason="begun before the turn")
            if outcomes[runner.source_name].status == "timeout":
                self._keep_late(runner, inp.cwd)
        asked = {source.name: begun.get(source.name, now) for source in self.sources}
        self._remember(outcomes, results, asked, inp.cwd)
        order = [s.name for s in self.sources] + [e.name for e in self.enrichers]
        blocks = [_measured(block) for name in order for block in results.get(name, [])]
        return blocks, [outcomes[name] for name in order]

    def _remember(
        self, outcomes: dict[str, Outcome], results: dict[str, list[ContextBlock]], asked: dict[str, float], cwd: object
    ) -> None:
        for source in self.sources:
            outcome = outcomes[source.name]
            if outcome.status not in ("applied", "skipped") or source.ttl <= 0:
                continue  # failures are retried next turn; a timeout's late answer is kept by _keep_late
            block = results[source.name][0] if results[source.name] else None
            measured = _measured(block) if block else None
            with self._lock:
                self._cache[(source.name, cwd)] = _Cached(measured, outcome.reason, asked[source.name] + source.ttl)

    def _keep_late(self, runner: _Runner, cwd: object) -> None:
        """A cached source that missed the deadline: its answer, when it comes, serves the next turn (a cold
        `git status` can take longer than a turn waits, and would otherwise be asked, and missed, again)."""
        source = next((source for source in self.sources if source.name == runner.source_name), None)
        if source is None or source.ttl <= 0:
            return
        with self._lock:
            drops = self._drops.get(source.name, 0)

        def arrived(late: _Runner) -> None:
            outcome, blocks = late.outcome(self.timeout)
            if outcome.status not in ("applied", "skipped"):
                return
            block = _measured(blocks[0]) if blocks else None
            reason = f"answered in {outcome.ms:.0f} ms, after its turn's deadline; kept for this one"
            with self._lock:
                if self._drops.get(source.name, 0) == drops:  # else a tool may have changed what it read
                    self._cache.setdefault((source.name, cwd), _Cached(block, reason, self.clock() + source.ttl))

        runner.when_late(arrived)


def _source_job(source: Source, inp: TurnInput) -> Callable[[], list[ContextBlock]]:
    def run() -> list[ContextBlock]:
        text = source.produce(inp)
        if not text:
            raise Skip("nothing to add")
        return [ContextBlock(source.name, source.priority, text if source.escaped else escape(text), ttl=source.ttl)]

    return run


def _enricher_job(enricher: Enricher, inp: TurnInput) -> Callable[[], list[ContextBlock]]:
    def run() -> list[ContextBlock]:
        if enricher.needs is not None and enricher.needs not in inp.text:
            raise Skip(f"no {enricher.needs!r} in the message")
        blocks = enricher.enrich(inp)
        if not blocks:
            raise Skip("nothing found")
        return list(blocks)

    return run


def _measured(block: ContextBlock) -> ContextBlock:
    if block.tokens:
        return block
    return replace(block, tokens=tokens.count(block.render()))


class _Runner(threading.Thread):
    """One source or enricher on its own daemon thread; the result is read only if it finished in time."""

    def __init__(self, name: str, kind: str, job: Callable[[], list[ContextBlock]]) -> None:
        super().__init__(name=f"context:{name}", daemon=True)
        self.source_name, self.kind, self.job = name, kind, job
        self.blocks: list[ContextBlock] = []
        self.error: BaseException | None = None
        self.elapsed: float | None = None
        self._late: Callable[[_Runner], None] | None = None
        self._late_lock = threading.Lock()

    def run(self) -> None:
        started = time.perf_counter()
        try:
            self.blocks = self.job()
        except Exception as exc:  # a bug in a source must not end the turn; it is shown in the trace
            self.error = exc
        with self._late_lock:
            self.elapsed = time.perf_counter() - started
            late = self._late
        if late is not None:
            late(self)

    def when_late(self, late: Callable[[_Runner], None]) -> None:
        """Call `late` with this runner once it finishes (at once if it just did)."""
        with self._late_lock:
            if self.elapsed is None:
                self._late = late
                return
        late(self)

    def outcome(self, timeout: float) -> tuple[Outcome, list[ContextBlock]]:
        name, kind = self.source_name, self.kind
        if self.elapsed is None:
            reason = f"dropped for time: no answer within {timeout * 1000:.0f} ms"
            return Outcome(name, kind, "timeout", reason, timeout * 1000), []  # type: ignore[arg-type]
        ms = self.elapsed * 1000
        if isinstance(self.error, Skip):
            return Outcome(name, kind, "skipped", str(self.error), ms), []  # type: ignore[arg-type]
        if self.error is not None:
            reason = f"{type(self.error).__name__}: {self.error}"[:300]
            return Outcome(name, kind, "failed", reason, ms), []  # type: ignore[arg-type]
        names = tuple(block.name for block in self.blocks)
        return Outcome(name, kind, "applied", "", ms, names), self.blocks  # type: ignore[arg-type]
