"""A copy of a git control path (file, link or small tree) taken before a confined command, and writing it back.

Copies are cached per path with the fingerprint they were taken at, so an unchanged path is not read again.
"""

from __future__ import annotations

import os
from pathlib import Path

from mini_agent.safety import gitrepo
from mini_agent.safety.sandbox.watch import Fingerprint, look

CAPTURE_BYTES = 2 * 1024 * 1024
"""Most bytes kept of one control path to put it back; a bigger one (a submodule's whole git dir) is only
watched."""
CAPTURE_DEPTH = 3
TOO_BIG = ("too big",)

Capture = tuple | None
"""("file", mode, bytes) | ("link", target) | ("dir", mode, ((name, Capture), ...)) | TOO_BIG | None (absent)."""
_captured: dict[Path, tuple[Fingerprint, Capture]] = {}
"""Per control path, the contents last read and the fingerprint they were read at: read again only on change."""


def capture_cached(path: Path) -> tuple[Fingerprint, Capture]:
    seen = look(path)
    cached = _captured.get(path)
    if cached is not None and cached[0] == seen:
        return cached
    budget = [CAPTURE_BYTES]
    capture = _capture(path, CAPTURE_DEPTH, budget)
    _captured[path] = (seen, capture)
    return seen, capture


def _capture(path: Path, depth: int, budget: list[int]) -> Capture:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if os.path.islink(path):
        return ("link", os.readlink(path))
    if os.path.isdir(path):
        if depth == 0:
            return TOO_BIG
        children = []
        for name in sorted(os.listdir(path)):
            child = _capture(path / name, depth - 1, budget)
            if child is TOO_BIG:
                return TOO_BIG
            children.append((name, child))
        return ("dir", info.st_mode & 0o7777, tuple(children))
    budget[0] -= info.st_size
    data = gitrepo.read_small(path, CAPTURE_BYTES) if budget[0] >= 0 else None
    return TOO_BIG if data is None else ("file", info.st_mode & 0o7777, data)


def write_capture(path: Path, capture: Capture) -> None:
    kind = capture[0]
    if kind == "link":
        os.symlink(capture[1], path)
    elif kind == "dir":
        path.mkdir()
        for name, child in capture[2]:
            if child is not None:
                write_capture(path / name, child)
        os.chmod(path, capture[1])
    else:
        path.write_bytes(capture[2])
        os.chmod(path, capture[1])


def forget_capture(path: Path) -> None:
    """Take the copy of `path` again next time: what is there now was not put back from it."""
    _captured.pop(path, None)
