"""The refs of a git common dir, listed cheaply: loose files under refs/, then packed-refs; read again only when a
directory under refs/ or packed-refs changed."""

from __future__ import annotations

import os
from pathlib import Path

from mini_agent.safety import gitrepo

MAX_REFS = 5_000
"""Most loose ref files listed; beyond, deleted refs are not reported."""

_refs_seen: dict[Path, tuple[tuple, dict[str, str] | None]] = {}
"""Per common dir, the refs last read and the times of refs/ directories and packed-refs they were read at: a
ref is created, moved or deleted through a rename in its directory, so unchanged times mean unchanged refs."""


def listed_refs(common: Path) -> dict[str, str] | None:
    """Every ref's name and commit: loose files under refs/, then packed-refs for those not loose. None when
    there are too many to list."""
    stamps: list[tuple[str, int]] = []
    pending = [os.path.join(common, "refs")]
    while pending:
        directory = pending.pop()
        try:
            stamps.append((directory, os.stat(directory).st_mtime_ns))
            with os.scandir(directory) as entries:
                pending += [entry.path for entry in entries if entry.is_dir(follow_symlinks=False)]
        except OSError:
            continue
    try:
        info = os.stat(os.path.join(common, "packed-refs"))
        stamps.append(("packed-refs", info.st_mtime_ns, info.st_size, info.st_ino))  # type: ignore[arg-type]
    except OSError:
        pass
    key = tuple(stamps)
    cached = _refs_seen.get(common)
    if cached is not None and cached[0] == key:
        return cached[1]
    found = _read_refs(common)
    _refs_seen[common] = (key, found)
    return found


def _read_refs(common: Path) -> dict[str, str] | None:
    found: dict[str, str] = {}
    base = common / "refs"
    count = 0
    for directory, _dirs, files in os.walk(base):
        for name in files:
            count += 1
            if count > MAX_REFS:
                return None
            path = Path(directory) / name
            value = gitrepo.read_text(path, 200)
            if value is not None:
                found[path.relative_to(common).as_posix()] = value.strip()
    packed = gitrepo.read_text(common / "packed-refs", 50_000_000) or ""
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name and not line.startswith(("#", "^")):
            found.setdefault(name.strip(), sha)
    return found
