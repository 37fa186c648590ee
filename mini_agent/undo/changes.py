"""What differs between two snapshots, in words an undo can act on: the changes a turn made (Change), the paths
a snapshot left out (Skipped, with the stamp that tells whether they changed), and git's raw diff read as Deltas.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from mini_agent.undo.shadow import Entry

IGNORED = "ignored by the project's ignore rules"


@dataclass(frozen=True)
class Change:
    """A file a turn changed, relative to the working tree."""

    path: str
    kind: Literal["added", "modified", "deleted", "permissions"]


@dataclass(frozen=True)
class Skipped:
    """A path a snapshot left out; `stamp` (size and mtime) tells whether it changed between two snapshots."""

    path: str
    why: str
    stamp: str = ""


@dataclass(frozen=True)
class Delta:
    """A path that differs between two snapshots: its entry in each (None where it does not exist)."""

    path: bytes
    old: Entry | None
    new: Entry | None

    @property
    def change(self) -> Change:
        kind = "added" if self.old is None else "deleted" if self.new is None else "modified"
        return Change(os.fsdecode(self.path), kind)


def stamp_of(info: os.stat_result) -> str:
    return f"{info.st_size}:{info.st_mtime_ns}"


def unsnapshotted(skipped: tuple[Skipped, ...]) -> set[str]:
    """The left-out paths a snapshot could have held: not ignored ones, which no snapshot ever holds (an
    ignored directory listed whole may later hold a file that is not ignored, and is snapshotted)."""
    return {skip.path for skip in skipped if skip.why != IGNORED}


def covered_by(path: str, left_out: set[str]) -> bool:
    """Whether path is one of the left-out paths or lies under a left-out directory ("sub/")."""
    if path in left_out:
        return True
    return any(skip.endswith("/") and path.startswith(skip) for skip in left_out)


def parse_raw_diff(raw: bytes) -> list[Delta]:
    """`git diff-tree -r -z` output (":oldmode newmode oldoid newoid status NUL path NUL" each) as deltas."""
    fields = raw.split(b"\0")
    deltas = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        old_mode, new_mode, old_oid, new_oid, _status = meta[1:].decode().split(" ")
        deltas.append(Delta(path, _entry(old_mode, old_oid), _entry(new_mode, new_oid)))
    return deltas


def _entry(mode: str, oid: str) -> Entry | None:
    return None if mode == "000000" else Entry(mode, oid)
