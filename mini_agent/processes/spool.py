"""A background job's output on disk: appended by the agent as it arrives, capped, read from absolute offsets.

The job never holds the file: its stdout and stderr are one pipe the agent reads (jobs.py), so it cannot write
past the cap, reopen the file, or truncate it. When the file outgrows the cap only its last half is kept: what a
job printing forever leaves is its newest output, and a reader behind the cut is told how much it missed.

Standard library only.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

SPOOL_CAP = 8 << 20
"""Bytes of one job's output kept on disk; beyond it the oldest half is dropped."""


def private_directory(root: Path | None) -> Path:
    """A new directory (0700) for this agent's spools under `root`/jobs (the data dir: hidden from every sandbox),
    after removing those of agents that are gone; None: the system temp dir."""
    if root is None:
        return Path(tempfile.mkdtemp(prefix="mini-agent-jobs-"))
    parent = root / "jobs"
    parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _sweep(parent)
    return Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=parent))


def _sweep(parent: Path) -> None:
    """Spool directories of agents that are gone (killed before they could remove theirs)."""
    for entry in parent.iterdir():
        pid = entry.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and _gone(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)


def _gone(pid: int) -> bool:
    """No process has this id (one that reused it keeps the directory until a later sweep)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process
        return False
    return False


@dataclass(frozen=True)
class Chunk:
    """Output read from a spool: the bytes, the offset after them, and how many bytes were dropped before them."""

    data: bytes
    end: int
    dropped: int


class Spool:
    """One job's output file, private to the agent (0600, created new)."""

    def __init__(self, path: Path, cap: int = SPOOL_CAP) -> None:
        self.path, self.cap = path, cap
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        self._lock = threading.Lock()
        self.kept = 0
        """Bytes on disk now: never more than the cap, even in the middle of an append."""
        self.end = 0
        """Bytes the job has written in all."""

    @property
    def _start(self) -> int:
        """The absolute offset of the file's first byte: everything before it was dropped."""
        return self.end - self.kept

    def append(self, data: bytes) -> None:
        with self._lock:
            if self._fd < 0:
                return
            half = self.cap // 2
            written = len(data)
            if written > half:  # on its own more than the half kept: the file holds its tail only
                data = data[-half:]
                self._keep_tail(0)
            elif self.kept + written > self.cap:
                self._keep_tail(half - written)
            os.lseek(self._fd, 0, os.SEEK_END)
            _write_all(self._fd, data)
            self.kept += len(data)
            self.end += written

    def _keep_tail(self, size: int) -> None:
        size = min(size, self.kept)
        os.lseek(self._fd, self.kept - size, os.SEEK_SET)
        tail = _read_exactly(self._fd, size)
        os.ftruncate(self._fd, 0)
        os.lseek(self._fd, 0, os.SEEK_SET)
        _write_all(self._fd, tail)
        self.kept = len(tail)

    def read(self, offset: int, limit: int) -> Chunk:
        """At most `limit` bytes from absolute `offset` (or from the oldest byte kept, when that was dropped)."""
        with self._lock:
            dropped = max(0, self._start - offset)
            offset = max(offset, self._start)
            size = max(0, min(limit, self.end - offset))
            if self._fd < 0 or size == 0:
                return Chunk(b"", offset, dropped)
            os.lseek(self._fd, offset - self._start, os.SEEK_SET)
            data = _read_exactly(self._fd, size)
            return Chunk(data, offset + len(data), dropped)

    def close(self, remove: bool = True) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
        if remove:
            try:
                self.path.unlink()
            except OSError:
                pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left > 0:
        part = os.read(fd, left)
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)
