"""Which skill folders were changed during a mini-agent session: not offered to the model until the human trusts
them.

A skill (SKILL.md and the files beside it) is text the model is told to follow and scripts it is told to run,
read outside any sandbox: a model steered by a page could plant one and obey it on its next call, or in the next
session. So a folder any of whose entries changed (ctime: `touch -d` cannot set it back) since the session started
is the session's work, whoever wrote it. After each tool call that may change files such folders are remembered
in the record the instruction files use (instruction_trust.py), keyed by the folder's real path, with a hash of
everything in it: while a folder still holds exactly that, later sessions do not offer it either, until the human
answers yes at an interactive start (app/skills_setup.py). The human's own edit changes the hash, which ends it.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from mini_agent.context.instruction_trust import remember, written
from mini_agent.safety.agent_files import definition_dirs

SKILL_FILE = "SKILL.md"
MAX_ENTRIES = 500
"""Entries of one folder looked at (for its newest change and its hash); a folder with more is judged by these."""
MAX_DEPTH = 4
HASHED_BYTES = 1024 * 1024
"""A file bigger than this is hashed by its size and times, not its content."""

CHANGED_NOW = "changed during this session"
CHANGED_BEFORE = "changed during an earlier mini-agent session and not trusted since"


def skill_roots(cwd: Path, user_dir: Path, home: Path | None = None) -> list[tuple[str, Path]]:
    """The skills directories, highest precedence first, each with its scope (the custom commands' places)."""
    return definition_dirs(cwd, user_dir, Path.home() if home is None else home, "skills")


def skill_folders(roots: Iterable[Path]) -> list[Path]:
    """Every folder directly below `roots` that holds a SKILL.md, each root's in name order."""
    found = []
    for root in roots:
        try:
            names = sorted(os.listdir(root))
        except OSError:
            continue
        found += [root / name for name in names if not name.startswith(".") and (root / name / SKILL_FILE).is_file()]
    return found


def _entries(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(path relative to the folder, lstat) for the folder itself and what is below it, symlinks not followed, in
    a stable order; strings and scandir, since this runs after every call that may change files."""
    top = os.fspath(folder)
    try:
        yield "", os.stat(top)  # the folder may itself be a link (~/.claude/skills/x -> dotfiles)
    except OSError:
        return
    count, pending = 1, [("", 0)]
    while pending and count < MAX_ENTRIES:
        relative, depth = pending.pop()
        try:
            with os.scandir(os.path.join(top, relative) if relative else top) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            path = f"{relative}/{entry.name}" if relative else entry.name
            yield path, info
            count += 1
            if stat.S_ISDIR(info.st_mode) and depth + 1 < MAX_DEPTH:
                pending.append((path, depth + 1))
            if count >= MAX_ENTRIES:
                return


def changed_since(folder: Path, started: float) -> bool:
    """Whether anything in the folder changed (was written, renamed, chmodded) since `started` (as the instruction
    files are judged: the agent's first call comes a model's reply after the start, far beyond a clock tick)."""
    return any(info.st_ctime >= started for _, info in _entries(folder))


def folder_digest(folder: Path) -> str:
    """A hash of the folder's names, kinds and contents (a link's target, a big file's size and times)."""
    digest = hashlib.sha256()
    for relative, info in _entries(folder):
        digest.update(f"{relative}\0{stat.S_IFMT(info.st_mode)}\0".encode("utf-8", "surrogateescape"))
        if stat.S_ISLNK(info.st_mode):
            digest.update(os.fsencode(_readlink(folder / relative)))
        elif stat.S_ISREG(info.st_mode) and info.st_size <= HASHED_BYTES:
            digest.update(_content(folder / relative))
        elif stat.S_ISREG(info.st_mode):
            digest.update(f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}".encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def distrust(folder: Path, started: float, record: dict[str, str]) -> str | None:
    """Why a skill folder is not to be obeyed (changed in this session, or an earlier one and not trusted since),
    or None. `record` is `instruction_trust.written()`, read once for a whole catalog."""
    if changed_since(folder, started):
        return CHANGED_NOW
    remembered = record.get(str(Path(os.path.realpath(folder))))
    if remembered is not None and remembered == folder_digest(folder):
        return CHANGED_BEFORE
    return None


def remember_changed(data_dir: Path | None, roots: Iterable[Path], started: float) -> list[Path]:
    """Remember every skill folder below `roots` changed since `started` (for the next sessions); the folders."""
    changed = [folder for folder in skill_folders(roots) if changed_since(folder, started)]
    if changed and data_dir is not None:
        record = written(data_dir)
        fresh = [(Path(os.path.realpath(folder)), folder_digest(folder)) for folder in changed]
        remember(data_dir, [(real, value) for real, value in fresh if record.get(str(real)) != value])
    return changed


def _readlink(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return ""


def _content(path: Path) -> bytes:
    from mini_agent.files.exact import open_exact  # never waiting on a FIFO, never through a swapped-in link

    try:
        fd = open_exact(Path(os.path.realpath(path)), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return b"?"
    try:
        return os.read(fd, HASHED_BYTES + 1)
    except OSError:
        return b"?"
    finally:
        os.close(fd)
