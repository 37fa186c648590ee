"""Noticing changes to the places a confined command must not change: the root's `.git/hooks`, `.git/config` and
the agent's config. The sandbox blocks such writes where it can; this catches what it cannot (Landlock inside a
writable root, a protected path that did not exist yet), so the caller can tell the human after the command."""

from __future__ import annotations

import os
from pathlib import Path

from mini_agent.safety.sandbox.confinement import READ_ONLY_IN_ROOT, Confinement, real

Fingerprint = tuple | None


def watched_paths(confinement: Confinement) -> tuple[Path, ...]:
    """The protected paths of a workspace-write confinement, existing or not (a new hook counts as a change)."""
    if confinement.level != "workspace-write":
        return ()
    root = real(confinement.root)
    paths = [root / name for name in READ_ONLY_IN_ROOT] + [real(path) for path in confinement.read_only_paths]
    if (root / ".git").is_file():
        paths.append(root / ".git")
    return tuple(dict.fromkeys(paths))


def fingerprint(paths: tuple[Path, ...]) -> dict[Path, Fingerprint]:
    """What each path looks like now: a file's identity and size and time, a directory's entries (two levels)."""
    return {path: _look(path, depth=2) for path in paths}


def changed(before: dict[Path, Fingerprint]) -> tuple[Path, ...]:
    """The paths that look different now than in `before`."""
    return tuple(path for path, seen in before.items() if _look(path, depth=2) != seen)


def look(path: Path, depth: int = 2) -> Fingerprint:
    """What one path looks like now, with a directory's entries `depth` levels deep."""
    return _look(path, depth)


def _look(path: Path, depth: int) -> Fingerprint:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    identity = (info.st_ino, info.st_mode, info.st_size, info.st_mtime_ns)
    if depth == 0 or not os.path.isdir(path) or os.path.islink(path):
        return identity
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return identity
    return (identity, tuple((name, _look(path / name, depth - 1)) for name in names))
