"""A second name for every object file and reflog of the project's repository, so that a sandboxed command that
deletes git's history (`rm -rf .git/objects`, a script pruning everything) cannot make it unrecoverable.

git never changes an object file in place, so a hard link in `<common dir>/mini-agent-keep/` is a full copy
that costs no space while the original exists. Before each workspace-write command the keep is brought up to
date (only object directories whose ctime changed are listed again); after a command that removed objects without
packing them, every kept file missing from the repository is linked back (`restore`). The sandbox keeps the keep
read-only where it can (bubblewrap). Files whose only name is in the keep (objects the repository itself dropped,
as `git gc` does) are removed after `EXPIRE_DAYS`, as git's own prune would.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from mini_agent.safety.sandbox import listings

KEEP = "mini-agent-keep"
EXPIRE_DAYS = 14
MAX_FILES = 50_000
"""Most object files kept for one repository; a bigger loose store is not kept (and `restore` says so)."""
_synced: dict[Path, int] = {}
"""Per object directory (`objects/ab`, `objects/pack`, `logs/...`): its ctime when its files were last linked (a
ctime cannot be set back, as `touch -d` sets an mtime)."""
_pruned: set[Path] = set()


def keep_dir(common: Path) -> Path:
    return common / KEEP


def sync(common: Path) -> bool:
    """Link every object file and reflog not yet kept; False when there are too many to keep."""
    keep = keep_dir(common)
    if not keep.is_dir():  # first use, or removed: link everything again
        for directory in [path for path in _synced if path.is_relative_to(common)]:
            del _synced[directory]
    if keep not in _pruned:
        _pruned.add(keep)
        _expire(keep)
    count = 0
    settled = time.time_ns() - listings.SETTLED_NS
    for directory, stamp in _object_dirs(common):
        names = None
        if _synced.get(directory) != stamp:
            names = _files(directory)
            target = keep / directory.relative_to(common)
            for name in names:
                _link(directory / name, target / name)
            # Changed within the timestamps' granularity: a file added in the same tick would leave the stamp as
            # it is, so it is listed again next time (see listings.py).
            _synced[directory] = stamp if stamp < settled else -1
        count += len(names) if names is not None else 0
        if count > MAX_FILES:
            return False
    return True


def restore(common: Path) -> int:
    """Link back every kept file the repository no longer has; how many."""
    keep = keep_dir(common)
    restored = 0
    for directory, _dirs, files in os.walk(keep):
        kept = Path(directory)
        original = common / kept.relative_to(keep)
        if os.path.realpath(original) != str(original):
            continue  # a link a command put there: linking back through it would write where it chose
        for name in files:
            if os.path.lexists(original / name):
                continue
            try:
                original.mkdir(parents=True, exist_ok=True)
                os.link(kept / name, original / name)
                restored += 1
            except OSError:
                continue
    _synced.clear()
    return restored


def _object_dirs(common: Path) -> list[tuple[Path, int]]:
    """objects/xx and objects/pack, and every directory of logs/ (reflogs are appended, never rewritten), each
    with its ctime. Paths are made only for directories whose time changed: this runs before every command."""
    found: list[tuple[str, int]] = []
    logs = os.path.join(common, "logs")
    try:
        found.append((logs, os.stat(logs).st_ctime_ns))
    except OSError:
        pass
    pending = [(os.path.join(common, "objects"), False), (os.path.join(common, "logs"), True)]
    while pending:
        directory, recurse = pending.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if not entry.is_dir(follow_symlinks=False):
                        continue
                    if recurse:
                        pending.append((entry.path, True))
                    elif not (len(entry.name) == 2 or entry.name == "pack"):
                        continue
                    found.append((entry.path, entry.stat(follow_symlinks=False).st_ctime_ns))
        except OSError:
            continue
    return [(_path(path), stamp) for path, stamp in found]


_paths: dict[str, Path] = {}


def _path(text: str) -> Path:
    found = _paths.get(text)
    if found is None:
        found = _paths[text] = Path(text)
    return found


def _files(directory: Path) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            return [entry.name for entry in entries if entry.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _link(source: Path, target: Path) -> None:
    try:
        try:
            os.link(source, target)
        except FileNotFoundError:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(source, target)
    except FileExistsError:
        if "logs" in target.parts and os.lstat(target).st_ino != os.lstat(source).st_ino:  # a reflog rewritten
            temporary = target.with_name(target.name + ".new")
            temporary.unlink(missing_ok=True)
            os.link(source, temporary)
            os.replace(temporary, target)
    except OSError:
        return


def _expire(keep: Path) -> None:
    """Remove kept files that are their file's only name and older than EXPIRE_DAYS."""
    limit = time.time() - EXPIRE_DAYS * 86400
    for directory, _dirs, files in os.walk(keep):
        for name in files:
            path = Path(directory) / name
            try:
                info = os.lstat(path)
                if info.st_nlink == 1 and info.st_ctime < limit:
                    path.unlink()
            except OSError:
                continue
