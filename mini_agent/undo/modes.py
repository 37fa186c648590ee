"""The permission bits of the files a snapshot holds, beyond the executable bit git itself records.

A git tree knows only 100644 and 100755, so each snapshot's commit message also carries a Modes record: the
usual mode of plain and of executable files, and every file whose mode is neither. It is kept up to date
cheaply: a snapshot lstat()s only the paths git lists as new or stat-dirty (a chmod changes a file's ctime, so
`git diff-files` lists it) and carries the rest over from the previous snapshot. git compares ctimes to the
second, so a chmod in the same second as the change git last recorded is invisible to it: paths changed
within the last second or so are "racy" and looked at again by the next snapshot.
"""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field

PERMISSIONS = 0o777
"""What a restore puts back: read, write and execute for owner, group and others (never setuid or setgid)."""
RACY_NS = 1_000_000_000
"""How recent a change must be (ns before the snapshot began) for the path to be looked at again next time."""


@dataclass
class Modes:
    regular: int = 0o644
    executable: int = 0o755
    other: dict[str, int] = field(default_factory=dict)
    """Files whose permission bits are not the usual ones for their kind."""
    racy: set[str] = field(default_factory=set)

    def of(self, path: str, executable: bool) -> int:
        usual = self.executable if executable else self.regular
        return self.other.get(path, usual)

    def update(self, seen: dict[str, os.stat_result | None], since_ns: int) -> Modes:
        """A copy with what lstat() found now (None: no longer a regular file); racy paths are the recent ones."""
        other = dict(self.other)
        racy = set()
        for path, info in seen.items():
            if info is None or not stat.S_ISREG(info.st_mode):
                other.pop(path, None)
                continue
            mode = info.st_mode & PERMISSIONS
            if mode == (self.executable if mode & stat.S_IXUSR else self.regular):
                other.pop(path, None)
            else:
                other[path] = mode
            if info.st_ctime_ns >= since_ns - RACY_NS:
                racy.add(path)
        return Modes(self.regular, self.executable, other, racy)

    @classmethod
    def first(cls, seen: dict[str, os.stat_result | None], since_ns: int) -> Modes:
        """The record of a first snapshot (every file seen): the most common modes become the usual ones."""
        counts: dict[bool, Counter] = {False: Counter(), True: Counter()}
        for info in seen.values():
            if info is not None and stat.S_ISREG(info.st_mode):
                counts[bool(info.st_mode & stat.S_IXUSR)][info.st_mode & PERMISSIONS] += 1
        regular = counts[False].most_common(1)[0][0] if counts[False] else 0o644
        executable = counts[True].most_common(1)[0][0] if counts[True] else 0o755
        return cls(regular, executable).update(seen, since_ns)

    def to_json(self) -> dict:
        return {"regular": self.regular, "executable": self.executable, "other": self.other, "racy": sorted(self.racy)}

    @classmethod
    def from_json(cls, data: dict | None) -> Modes | None:
        """None for a snapshot taken before modes were recorded."""
        if not isinstance(data, dict):
            return None
        return cls(data["regular"], data["executable"], dict(data.get("other", {})), set(data.get("racy", ())))
