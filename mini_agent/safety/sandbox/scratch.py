"""The private directory each confined command gets: its TMPDIR and, under bubblewrap, the unreadable placeholders
mounted over hidden paths. They live in one directory per process in the system temp dir, and a command's is
handed to the next command when it is left exactly as it was made.

Why: making and removing three directories and a file per command costs from 0.5 ms to several ms on a busy disk
(`rmdir` waits on the journal), and each one made in /tmp changes /tmp's listing, which the sandbox remembers
while it is unchanged (`listings`).

Why it is safe: a command at workspace-write can write in /tmp, so it can change these. A directory is handed on
only when its TMPDIR is empty and it, its TMPDIR and its placeholders are the same inodes with the same mode,
owner and ctime as when made (a ctime cannot be set back; adding, removing or renaming an entry, or a chmod, sets
it). Otherwise it is removed and a new one made. A command and all it started have ended by then (bubblewrap's
PID namespace; the Lineage kill elsewhere), so nothing changes them between the check and the next command.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

KEPT = 4
"""Most directories waiting for a command (commands run side by side take one each)."""
PLACEHOLDERS = ("hidden-file", "hidden-dir")

Seen = tuple[int, int, int, int, int]
"""(device, inode, mode, owner, ctime) of what was made."""


@dataclass
class Private:
    """One command's directory: `tmpdir` (its TMPDIR) inside `base`."""

    base: Path
    tmpdir: Path
    seen: dict[str, Seen] = field(default_factory=dict)

    def placeholders(self) -> tuple[Path, Path]:
        """An empty unreadable file and directory, to mount over hidden files and directories."""
        empty_file, empty_dir = self.base / PLACEHOLDERS[0], self.base / PLACEHOLDERS[1]
        if PLACEHOLDERS[0] not in self.seen:
            empty_file.touch()
            empty_dir.mkdir()
            os.chmod(empty_file, 0)
            os.chmod(empty_dir, 0)
            self.seen[PLACEHOLDERS[0]] = _seen(empty_file)
            self.seen[PLACEHOLDERS[1]] = _seen(empty_dir)
            self.seen[""] = _seen(self.base)
        return empty_file, empty_dir

    def intact(self) -> bool:
        """Everything as made, and the TMPDIR empty. (The base's and the TMPDIR's ctimes change with ordinary use;
        their identity, mode and listing are what matter. A placeholder must be untouched.)"""
        try:
            for name, seen in self.seen.items():
                now = _seen(self._path(name))
                if (now != seen) if name in PLACEHOLDERS else (now[:4] != seen[:4]):
                    return False
            return not os.listdir(self.tmpdir) and set(os.listdir(self.base)) == set(self.seen) - {""}
        except OSError:
            return False

    def _path(self, name: str) -> Path:
        return self.base / name if name else self.base


_lock = threading.Lock()
_parent: tuple[int, Path, Seen] | None = None
_waiting: list[Private] = []
_waiting_pid = 0


def take() -> Private:
    """A private directory for one command: one left intact by an earlier command, or a new one."""
    global _waiting_pid
    with _lock:
        if _waiting_pid != os.getpid():  # a forked child: the parent's are the parent's
            _waiting.clear()
            _waiting_pid = os.getpid()
        parent = _parent_dir()
        while _waiting:
            private = _waiting.pop()
            if private.base.parent == parent and private.intact():
                return private
            remove(private.base)
    base = Path(tempfile.mkdtemp(prefix="command-", dir=parent))
    tmpdir = base / "tmp"
    tmpdir.mkdir(mode=0o700)
    return Private(base, tmpdir, {"": _seen(base), "tmp": _seen(tmpdir)})


def give_back(private: Private) -> None:
    """After the command and all it started ended: kept for the next command if intact, else removed."""
    with _lock:
        if _waiting_pid == os.getpid() and len(_waiting) < KEPT and private.intact():
            _waiting.append(private)
            return
    remove(private.base)


def remove(base: Path) -> None:
    for placeholder in PLACEHOLDERS:  # mode 000: rmtree could not list the directory
        try:
            if not os.path.islink(base / placeholder):
                os.chmod(base / placeholder, 0o700)
        except OSError:
            pass
    shutil.rmtree(base, ignore_errors=True)


def _parent_dir() -> Path:
    """This process's directory for them, made once (again when it is not what was made). Call with `_lock`."""
    global _parent
    if _parent is not None and _parent[0] == os.getpid():
        try:
            if _seen(_parent[1])[:4] == _parent[2][:4]:
                return _parent[1]
        except OSError:
            pass
    path = Path(tempfile.mkdtemp(prefix="mini-agent-sandbox-"))
    _parent = (os.getpid(), path, _seen(path))
    atexit.register(_remove_parent, os.getpid(), path)
    return path


def _remove_parent(pid: int, path: Path) -> None:
    """At exit, in the process that made it (a forked child inherits the handler, not the directory)."""
    if os.getpid() != pid:
        return
    try:
        for name in os.listdir(path):
            remove(path / name)
        os.rmdir(path)
    except OSError:
        pass


def _seen(path: Path) -> Seen:
    info = os.lstat(path)
    return (info.st_dev, info.st_ino, info.st_mode, info.st_uid, info.st_ctime_ns)
