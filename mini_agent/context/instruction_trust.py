"""Which instruction text the agent itself wrote: remembered until the human trusts it.

A tool call (a write, an edit, any command, a sub-agent's too) that changes an instruction file or a file one
imports is noticed by the planted-files watch (safety/planted.py, which tells the human); the new content's hash
is remembered here, in the data directory, per file. While a file still holds exactly that content it is shown
to the model as data, not obeyed (instruction_text.py), in this session and the next ones, until the human
answers yes at an interactive start (app/instructions_setup.py). The human's own edit changes the hash, which ends
it. Text changed during the session by anything else is remembered too, when it is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

RECORD = "instructions-written.json"


def content_digest(real: Path) -> str | None:
    """The hash of a file's content now (as imports.py hashes it; never waiting on a FIFO), or None."""
    from mini_agent.context.imports import MAX_FILE_BYTES, digest  # not for `written`, read at every start
    from mini_agent.files.exact import open_exact

    try:
        fd = open_exact(real, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return digest(os.read(fd, MAX_FILE_BYTES + 1))
    except OSError:
        return None
    finally:
        os.close(fd)


def written(data_dir: Path | None) -> dict[str, str]:
    """Real path -> hash of the content the agent wrote there, for every file not yet trusted."""
    if data_dir is None:
        return {}
    try:
        text = (data_dir / RECORD).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}  # the usual case at start-up: no file, and json not even imported
    return _parsed(text)


def remember(data_dir: Path, contents: Iterable[tuple[Path, str]]) -> None:
    """Record (real path, content hash) pairs the agent or a command wrote; locked and written whole."""
    pairs = {str(path): value for path, value in contents}
    if not pairs:
        return
    import json

    from mini_agent.files.update import update_text

    def change(before: str) -> str:
        data = _parsed(before)
        if all(data.get(path) == value for path, value in pairs.items()):
            return before
        data.update(pairs)
        return json.dumps(data, indent=1, sort_keys=True)

    update_text(data_dir / RECORD, change)


def remember_files(data_dir: Path, reals: Iterable[Path]) -> None:
    """Record the current content of these files (those that exist) as written by the agent."""
    remember(data_dir, [(real, value) for real in reals if (value := content_digest(real)) is not None])


def trust(data_dir: Path, reals: Iterable[Path]) -> None:
    """The human's yes: these files' current content is theirs to obey."""
    gone = {str(real) for real in reals}
    import json

    from mini_agent.files.update import update_text

    def change(before: str) -> str:
        return json.dumps({k: v for k, v in _parsed(before).items() if k not in gone}, indent=1, sort_keys=True)

    update_text(data_dir / RECORD, change)


def _parsed(text: str) -> dict[str, str]:
    import json

    try:
        data = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}
