"""Temporary files of atomic writes, recorded while they exist so that a killed agent's leftovers get swept.

write_atomic writes a `.name.<hex>.tmp` file beside its target (same directory: same file system for the
rename, and the directory's group and default ACL apply to the new file) and renames it over the target. An
agent killed in between (kill -9, the OOM killer) would leave that file in the user's project. So before the
temporary file is created, an entry naming it and its owner (pid, process start time, boot) goes into
`<data dir>/pending/`, and after the rename, or the cleanup of a failed write, the entry goes. At start-up,
`sweep` removes the temporary files of entries whose owner is dead. Only paths we recorded are touched, each
with 64 random bits in its name, and only if it is still a regular file of ours: a user's file that merely
looks like one of ours is never deleted.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path

PENDING = "pending"


@contextmanager
def recorded(temporary: Path, data_dir: Path | None) -> Iterator[None]:
    """Record `temporary` as ours for the duration of the block (nothing recorded when `data_dir` is None).

    The block creates the temporary file and renames or removes it. A journal that cannot be written (a
    read-only data directory) costs only the sweep, never the write.
    """
    entry = _record(temporary, data_dir) if data_dir is not None else None
    try:
        yield
    finally:
        if entry is not None:
            with suppress(OSError):
                os.unlink(entry)


def sweep(data_dir: Path) -> list[Path]:
    """Remove the temporary files that dead agents recorded and left behind; the paths removed."""
    directory = data_dir / PENDING
    try:
        names = os.listdir(directory)
    except OSError:  # no journal yet: nothing was ever in flight
        return []
    removed = []
    for name in names:
        entry = directory / name
        try:
            record = json.loads(entry.read_text(encoding="utf-8"))
            owner = (int(record["pid"]), record.get("start"), record.get("boot"), record.get("pidns"))
            temporary = Path(record["path"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written this instant, or not ours to judge
        if _alive(*owner):
            continue
        if _ours(temporary):
            with suppress(OSError):
                os.unlink(temporary)
                removed.append(temporary)
        with suppress(OSError):
            os.unlink(entry)
    return removed


def _record(temporary: Path, data_dir: Path) -> Path | None:
    directory = data_dir / PENDING
    entry = directory / f"{os.getpid()}-{os.urandom(8).hex()}.json"
    pid = os.getpid()
    # ASCII JSON: a path with undecodable bytes (surrogate escapes) survives the round trip.
    owner = {"pid": pid, "start": _own_start_time(pid), "boot": _boot_id(), "pidns": _pid_namespace()}
    text = json.dumps({**owner, "path": str(temporary)})
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(entry, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError:
        return None
    try:
        os.write(fd, text.encode("ascii"))
    except OSError:
        os.close(fd)
        with suppress(OSError):
            os.unlink(entry)
        return None
    os.close(fd)
    return entry


def _alive(pid: int, start: int | None, boot: str | None, pidns: str | None = None) -> bool:
    """Whether the process that wrote an entry still runs (not merely a process that reuses its pid)."""
    if boot is not None and boot != _boot_id():
        return False  # pids start over at every boot
    if pidns != _pid_namespace():
        return True  # an agent in another container sharing the data dir: its pids mean nothing here
    if os.path.isdir("/proc/self"):
        return start is None or _start_time(pid) == start  # None once it is gone or a zombie
    try:
        os.kill(pid, 0)  # without /proc, a reused pid looks alive: the file stays, which is the safe mistake
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process has the pid now, so ours is gone
    return True


def _ours(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.geteuid()


def _start_time(pid: int) -> int | None:
    """When a running process started, in clock ticks since boot (Linux); None if it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stream:
            fields = stream.read().rsplit(b")", 1)[1].split()
        return None if fields[0] == b"Z" else int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


@cache
def _own_start_time(pid: int) -> int | None:
    return _start_time(pid)  # keyed by pid: a forked child is a process of its own


@cache
def _pid_namespace() -> str | None:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


@cache
def _boot_id() -> str | None:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as stream:
            return stream.read().strip()
    except OSError:
        return None
