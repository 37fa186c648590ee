"""Answers that depend only on directory listings (which credential places exist, which `.env*` files sit beside
the project, where the user's services keep their sockets), remembered while none of those directories changed.

Every confined command needs these answers, and working them out again is ~180 `lstat` calls and a scan of /tmp.
A remembered answer must never go stale: a credential created between two commands must be hidden from the second.

Why a directory's state is enough: adding, removing or renaming an entry, or changing the directory's
permissions, sets its ctime to the current time, and nothing but the system clock can set a ctime back
(`touch -d` sets mtime only). The state kept is the directory's identity, mtime, ctime, size and link count,
through `stat` (following links, so a link on the way that now points elsewhere shows as another directory).

Why "settled": a timestamp is as coarse as the kernel's tick (and the filesystem: 1 s on some, 2 s on FAT), so two
changes in one tick can carry the same ctime. An answer is remembered only when every directory it rests on was
last changed more than `SETTLED_NS` before the look began; one changed later is looked at again on every call.

Paths are resolved (`realpath`) again on every call unless they had no link anywhere on their way; see `existing`.
"""

from __future__ import annotations

import itertools
import operator
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable

SETTLED_NS = 3_000_000_000
"""How long ago a directory must have last changed for its state to vouch for its listing: the coarsest common
timestamp (FAT's 2 s) plus a tick of the kernel's coarse clock, with room to spare."""
MOST_REMEMBERED = 64
"""Answers kept per kind; beyond, the oldest are dropped (they are only a saving)."""

State = tuple | None
_existing: dict[tuple[str, ...], tuple[tuple[str, ...], tuple[State, ...], tuple[str, ...], frozenset[str]]] = {}
_names: dict[tuple, tuple[State, tuple[str, ...]]] = {}
_lock = threading.Lock()
_name = operator.attrgetter("name")
_now = time.time_ns
"""The clock directories' ctimes are compared with (tests move it to make every directory look settled)."""


def state(directory: str) -> State:
    """What changes whenever the listing under `directory` (after following links) may have changed."""
    try:
        info = os.stat(directory)
    except (OSError, ValueError):
        return None
    return (info.st_dev, info.st_ino, info.st_mode, info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_nlink)


def _settled(states: Iterable[State], started: int) -> bool:
    return all(seen is None or seen[4] < started - SETTLED_NS for seen in states)


def existing(paths: tuple[str, ...]) -> tuple[str, ...]:
    """The resolved form of each of the absolute `paths` that exists (as `os.path.lexists` says), in order.

    Remembered per tuple of paths, with the state of every directory on the way to each of them (from `/`).
    While those are the same and settled, each entry on the way is the same inode, so a path that did not exist
    still does not, one that did still does, and one with no link on its way (its resolved form is itself) still
    has none. A path with a link somewhere is resolved again each time: the link's target can change elsewhere."""
    started = _now()
    remembered = _existing.get(paths)
    if remembered is None and not all(path.startswith("/") for path in paths):
        return _look(paths)[0]
    directories = remembered[0] if remembered is not None else _ancestors(paths)
    states = tuple(map(state, directories))  # before looking: a change while looking shows as a change next time
    if remembered is not None and remembered[1] == states:
        _, _, found, straight = remembered
        return tuple(path if path in straight else os.path.realpath(path) for path in found)
    resolved, found, straight = _look(paths)
    if _settled(states, started):
        _remember(_existing, paths, (directories, states, found, straight))
    return resolved


def names(
    directory: str, matches: Callable[[str], object], limit: int | None = None, sockets: bool = False
) -> tuple[str, ...]:
    """The names in `directory` (of the first `limit` entries listed) that `matches` (a name filter: it must look
    at the name only), of sockets only when `sockets` (an entry's type cannot change without a change to the
    listing), remembered while the directory is the same and settled."""
    key = (directory, matches, limit, sockets)
    started = _now()
    seen = state(directory)
    remembered = _names.get(key)
    if remembered is not None and remembered[0] == seen and seen is not None:
        return remembered[1]
    try:
        with os.scandir(directory) as entries:
            listed = itertools.islice(entries, limit)
            if sockets:
                listed = filter(_is_socket, listed)
            found = tuple(filter(matches, map(_name, listed)))
    except OSError:
        return ()
    if seen is not None and _settled((seen,), started):
        _remember(_names, key, (seen, found))
    return found


def _look(paths: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """Resolved forms of the paths that exist, those paths, and those of them with no link on their way."""
    resolved, found, straight = [], [], set()
    for path in paths:
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        resolved.append(real)
        found.append(path)
        if real == path:
            straight.add(path)
    return tuple(resolved), tuple(found), frozenset(straight)


def _ancestors(paths: tuple[str, ...]) -> tuple[str, ...]:
    directories: dict[str, None] = {}
    for path in paths:
        parent = os.path.dirname(path)
        while parent not in directories:
            directories[parent] = None
            if parent == "/":
                break
            parent = os.path.dirname(parent)
    return tuple(directories)


def _remember(store: dict, key, value) -> None:
    with _lock:  # confine() may run on several threads at once
        store.pop(key, None)
        if len(store) >= MOST_REMEMBERED:
            del store[next(iter(store))]
        store[key] = value


def _is_socket(entry: os.DirEntry) -> bool:
    try:
        return stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode)
    except OSError:
        return False
