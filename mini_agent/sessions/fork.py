"""Forking a session: a new session file (new id) holding the whole log of another, which is left unchanged.

The fork copies every entry, rewound branches, undo checkpoints and undos included, so it continues exactly
where the original stands and can undo the same turns: the snapshots live in the project's one shadow store,
and an undo never overwrites a file changed since its turn, so undoing a turn in both is safe (the second finds
nothing left to do). Its header names the session it came from (`forked_from`).

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
