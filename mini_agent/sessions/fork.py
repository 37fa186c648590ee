"""Forking a session: a new session file (new id) holding the whole log of another, which is left unchanged.

The fork copies every entry, rewound branches, undo checkpoints and undos included, so it continues exactly
where the original stands and can undo the same turns: the snapshots live in the project's one shadow store,
and an undo never overwrites a file changed since its turn, so undoing a turn in both is safe (the second finds
nothing left to do). Its header names the session it came from (`forked_from`). A turn still under way in
the process running the original is closed in the copy: its files are never the fork's to undo.

The copy is written to a temporary file, made durable and then renamed into place: a kill -9 in the middle
leaves either no fork or a whole one, never a listed session holding half a conversation. The temporary file
is recorded in files/pending.py, so the next start sweeps it away.
"""

from __future__ import annotations

import os
from pathlib import Path

from mini_agent.files.pending import recorded
from mini_agent.sessions.journal import SessionWriter


def write_fork(path: Path, header: dict, entries: list[dict], secrets, data_dir: Path) -> None:
    """Write a session file at `path` (a new name) holding `header` and `entries`, whole or not at all."""
    temporary = path.with_name(f".{path.name}.{os.urandom(8).hex()}.tmp")
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with recorded(temporary, data_dir):
        try:
            with SessionWriter(temporary, header, secrets) as copy:
                for entry in entries:
                    copy.write(entry)
            if copy.error is not None:
                raise copy.error
            os.rename(temporary, path)  # the name has a fresh random id: nothing is there to replace
        finally:
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
    _sync_directory(path.parent)


def copied_entries(entries: list[dict], path: Path) -> list[dict]:
    """The log a fork of the session at `path` starts with: all of it; plus, when the last turn began changing
    files and the process that has the session is still running it, the mark that closes that turn for the fork.
    Its files are that session's to record, never the fork's (app/lifecycle.py records a turn left open, by a
    kill, when a session is continued)."""
    if _turn_open(entries) and _in_use(path):
        return [*entries, {"type": "unchanged"}]
    return entries


def _turn_open(entries: list[dict]) -> bool:
    """The log's last turn began changing files and has not ended (app/lifecycle.py's undo bookkeeping)."""
    kinds = [entry["type"] for entry in entries if entry["type"] in ("changing", "checkpoint", "unchanged")]
    return bool(kinds) and kinds[-1] == "changing"


def _in_use(path: Path) -> bool:
    """Whether another writer holds the session file's lock (a process running on it)."""
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def _sync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
