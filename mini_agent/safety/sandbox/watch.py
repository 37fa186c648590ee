"""Noticing changes to the places a confined command must not change: the agent's config in the root and the
caller's read-only paths (the git dir's control paths are `gitguard`'s). The sandbox blocks such writes where it
can; this catches what it cannot (Landlock inside a writable root, a protected path that did not exist yet), so
the caller can tell the human after the command."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mini_agent.safety.sandbox.confinement import READ_ONLY_IN_ROOT, Confinement, real

Fingerprint = tuple | None


def watched_paths(confinement: Confinement) -> tuple[Path, ...]:
    """The protected paths of a workspace-write confinement, existing or not (a new hook counts as a change)."""
    if confinement.level != "workspace-write":
        return ()
    root = real(confinement.root)
    paths = [root / name for name in READ_ONLY_IN_ROOT] + [real(path) for path in confinement.read_only_paths]
    return tuple(dict.fromkeys(paths))


def fingerprint(paths: tuple[Path, ...]) -> dict[Path, Fingerprint]:
    """What each path looks like now: a file's identity and size and time, a directory's entries (two levels)."""
    return {path: look(path) for path in paths}


def changed(before: dict[Path, Fingerprint]) -> tuple[Path, ...]:
    """The paths that look different now than in `before`."""
    return tuple(path for path, seen in before.items() if look(path) != seen)


def look(path: Path, depth: int = 2) -> Fingerprint:
    """What a path looks like now: identity, size and times (ctime too: `touch -d` cannot set it back), and for a
    directory the same of its entries, `depth` levels down; None when it does not exist."""
    return _look(os.fspath(path), depth)


def _look(path: str, depth: int) -> Fingerprint:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    identity = (info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if depth == 0 or not stat.S_ISDIR(info.st_mode):
        return identity
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return identity
    return (identity, tuple((name, _look(os.path.join(path, name), depth - 1)) for name in names))
