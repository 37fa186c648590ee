"""Turn by turn undo: a snapshot before a turn's first change and one after the turn, popped by /undo.

The integrator calls `begin_turn()` when a turn starts, `before_change()` just before each write or exec tool
runs (only the first call of a turn takes a snapshot, so read-only turns cost nothing), and `end_turn()` when
the turn ends, also after an error or Ctrl-C. `/undo` calls `undo()`, and the next turn tells the model what
happened with `undo_notice(report)`.

The stack lives in memory. To keep it across `--resume`, log the Checkpoint that `end_turn()` returns and each
undo, then rebuild with `UndoStack(snapshots, checkpoints)`: the snapshot commits stay in the store, reachable
from the reflog of refs/mini-agent/snapshots.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from mini_agent.undo.restore import RestoreResult, restore
from mini_agent.undo.shadow import SnapshotError
from mini_agent.undo.snapshots import Snapshots

NOTICE_PATHS = 20
"""Paths named per kind in the model's notice; the rest are counted."""


@dataclass(frozen=True)
class Checkpoint:
    """A turn that changed files: snapshot commits from before its first change and from its end."""

    before: str
    after: str


@dataclass(frozen=True)
class Unrecorded:
    """A turn that ran write or exec tools, but whose snapshots failed: it cannot be undone."""

    problem: str


@dataclass(frozen=True)
class UndoReport:
    result: RestoreResult | None = None
    """What was restored; None when nothing was."""
    problem: str = ""
    """Why nothing was restored, in words for the user."""
    remaining: int = 0
    """Turns that can still be undone after this one."""
    turns: int = 0
    """How many turns were undone."""


class UndoStack:
    def __init__(self, snapshots: Snapshots, checkpoints: Iterable[Checkpoint] = ()) -> None:
        self.snapshots = snapshots
        self._turns: list[Checkpoint | Unrecorded] = list(checkpoints)
        self._changing = False
        self._before: str | None = None
        self._undone = 0
        """Turns undone so far, so that "nothing to undo" after undoing them all says so."""
        self._snapshotting = threading.Lock()
        """`prepare` runs on the preload's thread while tool calls go on: a before-snapshot or an undo waits for it
        rather than snapshot the same tree beside it (after it, the before-snapshot finds it unchanged: cheap)."""

    @property
    def checkpoints(self) -> tuple[Checkpoint | Unrecorded, ...]:
        return tuple(self._turns)

    def prepare(self) -> None:
        """Snapshot the tree now, for nothing but speed: the store made and its index filled while the model
        thinks (step_preload.py), so that the first write or exec tool's before-snapshot only looks at what
        changed since. A turn's checkpoints never rely on it: their before-snapshot is taken at the first change (the
        same commit when nothing changed since: snapshots.py); a failed one is tried again there. From any thread."""
        with self._snapshotting:
            if not self._changing:
                self.snapshots.take()

    def begin_turn(self) -> None:
        self._changing = False
        self._before = None

    def before_change(self) -> str | None:
        """Take the turn's before-snapshot, once; call it before every write or exec tool. The snapshot when this
        call took it (to be logged at once: a run killed mid-turn can still be undone), else None."""
        with self._snapshotting:
            if self._changing:
                return None
            self._changing = True
            self._before = self.snapshots.take()
            return self._before

    def end_turn(self) -> Checkpoint | None:
        """Take the after-snapshot of a turn that may have changed files; the checkpoint pushed, if any."""
        if not self._changing:
            return None
        self._changing = False
        before, self._before = self._before, None
        if before is None:
            self._turns.append(Unrecorded(f"no snapshot before its changes ({self.snapshots.problem})"))
            return None
        after = self.snapshots.take()
        if after is None:
            self._turns.append(Unrecorded(f"no snapshot after its changes ({self.snapshots.problem})"))
            return None
        try:
            if not self.snapshots.changes(before, after):
                return None
        except SnapshotError:
            pass  # keep it: an undo that finds nothing to do is better than one that is missing
        checkpoint = Checkpoint(before, after)
        self._turns.append(checkpoint)
        return checkpoint

    def undo(self, count: int = 1, *, force: bool = False) -> UndoReport:
        """Restore the files of the last `count` turns that changed any and forget those turns."""
        return self.rewind(max(0, len(self._turns) - max(1, count)), force=force)

    def rewind(self, keep: int, *, force: bool = False) -> UndoReport:
        """Put the files back as they were before turn `keep` of this stack (0 is its oldest) and forget that
        turn and every later one: each is undone in turn, newest first, so a file the user changed between
        turns is a conflict left alone, not silently overwritten. Stops at a turn that cannot be undone."""
        with self._snapshotting:  # not while `prepare` lists the tree being put back
            return self._rewind(keep, force)

    def _rewind(self, keep: int, force: bool) -> UndoReport:
        if keep >= len(self._turns):
            if self._undone:
                undone = f"{self._undone} turn{'s' if self._undone > 1 else ''}"
                return UndoReport(problem=f"Nothing to undo: every turn that changed files is undone ({undone}).")
            return UndoReport(problem="Nothing to undo: no turn of this session changed files.")
        results: list[RestoreResult] = []
        problem = ""
        while len(self._turns) > keep:
            turn = self._turns[-1]
            if isinstance(turn, Unrecorded):
                if not results:
                    self._turns.pop()  # reported once; the next undo goes on with the turn before it
                problem = f"The last turn that ran tools cannot be undone: {turn.problem}."
                if results:
                    problem = f"Stopped at a turn that cannot be undone: {turn.problem}."
                break
            try:
                results.append(restore(self.snapshots, turn.before, turn.after, force=force))
            except SnapshotError as error:
                problem = f"Undo failed, no file of that turn was changed: {error}."  # the turn stays: try again
                break
            self._turns.pop()
        self._undone += len(results)
        result = merged(results) if results else None
        return UndoReport(result, problem, remaining=len(self._turns), turns=len(results))


def merged(results: list[RestoreResult]) -> RestoreResult:
    """Several turns' restores, newest first, as one: a path is listed once, as the oldest turn found it."""

    def unique(items, key):
        found = {}
        for item in items:
            found[key(item)] = item  # later (older turns) win
        return tuple(sorted(found.values(), key=key))

    conflicts = tuple(dict.fromkeys(path for result in results for path in result.conflicts))
    return RestoreResult(
        unique((change for result in results for change in result.undone), lambda change: change.path),
        conflicts,
        unique((item for result in results for item in result.failed), lambda item: item[0]),
        unique((skip for result in results for skip in result.not_covered), lambda skip: skip.path),
    )


def undo_notice(report: UndoReport, how: str = "/undo") -> str:
    """What the model is told at the start of the next turn; empty when the undo restored nothing."""
    result = report.result
    if result is None or not (result.undone or result.conflicts or result.failed):
        return ""
    by_kind = {
        "modified": "restored the earlier content of",
        "added": "deleted the new files",
        "deleted": "recreated the deleted files",
        "permissions": "restored the permissions of",
    }
    parts = []
    for kind, verb in by_kind.items():
        paths = [change.path for change in result.undone if change.kind == kind]
        if paths:
            parts.append(f"{verb} {_listing(paths)}")
    turns = "turn" if report.turns <= 1 else f"{report.turns} turns"
    lines = [
        f"The user undid the file changes of your last {turns} that changed files ({how})"
        + (": " + "; ".join(parts) + "." if parts else ".")
    ]
    if result.conflicts:
        lines.append(f"Left as they are, because the user changed them after your turn: {_listing(result.conflicts)}.")
    if result.failed:
        lines.append("Could not be restored: " + _listing([f"{path} ({why})" for path, why in result.failed]) + ".")
    if result.not_covered:
        lines.append(
            "Not covered by the undo (ignored, too large or nested repositories), so possibly still as you left them: "
            + _listing([skip.path for skip in result.not_covered])
            + "."
        )
    lines.append("Do not redo those changes unless the user asks again; read files again before editing them.")
    return "\n".join(lines)


def report_lines(report: UndoReport) -> list[str]:
    """What the user is told, line by line: each file restored, and each one not, with why."""
    result = report.result
    if result is None:
        return [report.problem]
    lines = [f"{change.kind} {shown(change.path)}: undone" for change in result.undone] or ["Nothing to restore."]
    lines += [f"{shown(path)}: changed since the turn, left as it is" for path in result.conflicts]
    lines += [f"{shown(path)}: could not be restored ({why})" for path, why in result.failed]
    lines += [f"{shown(skip.path)}: not restored, not in the snapshots ({skip.why})" for skip in result.not_covered]
    if report.problem:
        lines.append(report.problem)
    lines.append(f"{report.remaining} more turn(s) can be undone." if report.remaining else "Nothing more to undo.")
    return lines


def shown(path: str) -> str:
    """A file name as one visible line: control, format and undecodable characters as escapes, so a name the
    model chose can neither drive the terminal nor pass for another line of the report."""
    return "".join(char if char.isprintable() else f"\\u{ord(char):04x}" for char in path)


def fully_undone(report: UndoReport) -> bool:
    """Whether every change of the undone turns was reversed: nothing left alone, failed or uncovered."""
    result = report.result
    if result is None or report.problem:
        return False
    return not (result.conflicts or result.failed or result.not_covered)


def _listing(items: Iterable[str]) -> str:
    items = list(items)
    shown = ", ".join(items[:NOTICE_PATHS])
    return shown if len(items) <= NOTICE_PATHS else f"{shown} and {len(items) - NOTICE_PATHS} more"
