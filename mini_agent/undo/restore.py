"""Undoing one turn: every file it changed goes back to the before-snapshot, unless the user changed it since.

Each path is in one of three states now: as the turn left it (restored), already as it was before the turn
(nothing to do), or something else: the user edited it after the turn ended. Those are conflicts and are left
alone, because silently throwing away the user's own later work is worse than an incomplete undo; with
force=True they are overwritten too. Files are replaced atomically (a temp file in the same directory, then a
rename), so an interrupted undo leaves each file either old or new, never half-written.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mini_agent.undo.changes import Change, Delta, Skipped, covered_by, unsnapshotted
from mini_agent.undo.modes import PERMISSIONS
from mini_agent.undo.shadow import Entry, ShadowGit, SnapshotError

if TYPE_CHECKING:
    from mini_agent.undo.snapshots import Snapshots

_TEMP_PREFIX = b".mini-agent-undo-"


@dataclass(frozen=True)
class RestoreResult:
    undone: tuple[Change, ...]
    """The turn's changes that are now reversed; `kind` is what the turn did (an added file is now deleted)."""
    conflicts: tuple[str, ...] = ()
    """Files changed again after the turn ended, left as they are (overwritten only with force=True)."""
    failed: tuple[tuple[str, str], ...] = ()
    """(path, reason) for files that could not be written or removed."""
    not_covered: tuple[Skipped, ...] = ()
    """Paths the snapshots left out (too large, nested repositories) that changed during the turn."""


def restore(snapshots: Snapshots, before: str, after: str, *, force: bool = False) -> RestoreResult:
    """Undo what changed from `before` to `after`; SnapshotError, with no file touched, when git cannot tell how."""
    now = snapshots.take()
    if now is None:
        raise SnapshotError(f"cannot check the files' current state: {snapshots.problem}")
    since_turn = {delta.path: delta.new for delta in snapshots.deltas(after, now, covered_only=False)}
    unsure = unsnapshotted(snapshots.skipped_in(now))
    undone: list[Change] = []
    conflicts: list[str] = []
    plan: list[Delta] = []
    for delta in snapshots.deltas(before, after):
        current = since_turn.get(delta.path, delta.new)
        unknown = covered_by(os.fsdecode(delta.path), unsure)  # left out of the snapshot of now
        if unknown and not force:
            conflicts.append(delta.change.path)
        elif unknown:
            plan.append(delta)
        elif current == delta.old:
            undone.append(delta.change)
        elif current == delta.new or force:
            plan.append(delta)
        else:
            conflicts.append(delta.change.path)
    blobs = read_blobs(snapshots.git, [delta.old.oid for delta in plan if delta.old is not None])
    root = os.fsencode(os.path.realpath(snapshots.work_tree))
    modes = snapshots.modes_in(before)
    failed: list[tuple[str, str]] = []
    # Removals first: a file being restored may need the place a directory the turn created now holds.
    for delta in sorted(plan, key=lambda delta: delta.old is not None):
        try:
            refuse_symlinked_parent(root, delta.path)
            if delta.old is None:
                remove(root, delta.path)
            else:
                mode = modes.of(os.fsdecode(delta.path), delta.old.executable) if modes is not None else None
                write(root, delta.path, delta.old, blobs[delta.old.oid], mode)
        except OSError as error:
            failed.append((delta.change.path, error.strerror or str(error)))
        else:
            undone.append(delta.change)
    for path, was, then in snapshots.mode_changes(before, after):
        change = Change(os.fsdecode(path), "permissions")
        try:
            refuse_symlinked_parent(root, path)
            info = os.lstat(os.path.join(root, path))
            current = info.st_mode & PERMISSIONS if stat.S_ISREG(info.st_mode) else None
            if current == was:
                undone.append(change)
            elif current == then or (force and current is not None):
                os.chmod(os.path.join(root, path), was)
                undone.append(change)
            else:
                conflicts.append(change.path)
        except FileNotFoundError:
            conflicts.append(change.path)
        except OSError as error:
            failed.append((change.path, error.strerror or str(error)))
    return RestoreResult(
        tuple(sorted(undone, key=lambda change: change.path)),
        tuple(conflicts),
        tuple(failed),
        changed_but_left_out(snapshots.skipped_in(before), snapshots.skipped_in(after)),
    )


def read_blobs(git: ShadowGit, oids: list[str]) -> dict[str, bytes]:
    """The contents of the given blobs from one `git cat-file --batch` run."""
    unique = list(dict.fromkeys(oids))
    if not unique:
        return {}
    output = git.run("cat-file", "--batch", input="".join(f"{oid}\n" for oid in unique).encode())
    blobs: dict[str, bytes] = {}
    position = 0
    for oid in unique:
        end_of_header = output.index(b"\n", position)
        header = output[position:end_of_header].split(b" ")
        if len(header) != 3 or header[1] != b"blob":
            raise SnapshotError(f"the snapshot store lost object {oid}")
        start = end_of_header + 1
        blobs[oid] = output[start : start + int(header[2])]
        position = start + int(header[2]) + 1
    return blobs


def refuse_symlinked_parent(root: bytes, path: bytes) -> None:
    """No writing or deleting through a directory that became a symlink since: it may lead out of the project."""
    parent = os.path.join(root, os.path.dirname(path))
    if os.path.realpath(parent) != os.path.normpath(parent):
        raise OSError(errno.ELOOP, "a directory on its path is now a symlink")


def remove(root: bytes, path: bytes) -> None:
    """Delete a file the turn added, then the directories that are left empty by that; each step inside a directory
    reached from the project root without following a symlink, so a link swapped in meanwhile leads nowhere."""
    try:
        _inside_parent(root, path, os.unlink)
    except FileNotFoundError:
        pass
    parent = os.path.dirname(path)
    while parent:
        try:
            _inside_parent(root, parent, os.rmdir)
        except OSError:  # not empty (or gone): the directories above stay too
            return
        parent = os.path.dirname(parent)


def _inside_parent(root: bytes, path: bytes, action) -> None:
    """`action(name, dir_fd=...)` on `path`, in its directory's descriptor (see `_parent`)."""
    directory, name = _parent(root, path, create=False)
    try:
        action(name, dir_fd=directory)
    finally:
        os.close(directory)


def write(root: bytes, path: bytes, entry: Entry, data: bytes, mode: int | None = None) -> None:
    """Replace the file at path with the snapshot's content and mode, atomically; with no mode recorded (an
    older snapshot), the executable bit on the permissions the file has now. Written inside a descriptor of its
    directory, reached from the project root without following a symlink (the file tools' way, files/exact.py):
    a directory swapped for a link to outside the project between the check and the write is refused."""
    directory, name = _parent(root, path, create=True)
    temp = _TEMP_PREFIX + os.urandom(6).hex().encode()
    try:
        if entry.symlink:
            os.symlink(data, temp, dir_fd=directory)
        else:
            kept = _permissions_in(directory, name)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW
            descriptor = os.open(temp, flags, 0o666, dir_fd=directory)
            with os.fdopen(descriptor, "wb") as out:
                out.write(data)
                base = kept if kept is not None else os.fstat(descriptor).st_mode & 0o777
                os.fchmod(descriptor, mode if mode is not None else with_executable_bit(base, entry.executable))
        try:
            info = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            os.rmdir(name, dir_fd=directory)  # empty, so invisible to git; one with (ignored) files fails, reported
        os.replace(temp, name, src_dir_fd=directory, dst_dir_fd=directory)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=directory)
        except FileNotFoundError:
            pass
        raise
    finally:
        os.close(directory)


def _parent(root: bytes, path: bytes, create: bool) -> tuple[int, bytes]:
    """A descriptor of `path`'s directory and its name there. The root is the user's project, resolved once; below
    it no symlink is followed (ELOOP / ENOTDIR if one was swapped in)."""
    from mini_agent.files.exact import open_directory

    parent = Path(os.fsdecode(os.path.realpath(root))) / os.fsdecode(os.path.dirname(path))
    return open_directory(parent, create=create), os.path.basename(path)


def _permissions_in(directory: int, name: bytes) -> int | None:
    try:
        info = os.stat(name, dir_fd=directory, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return info.st_mode & 0o777 if stat.S_ISREG(info.st_mode) else None


def with_executable_bit(mode: int, executable: bool) -> int:
    """Executable for whoever may read, as `chmod +x` under a umask; or no executable bits at all."""
    return mode | ((mode & 0o444) >> 2) if executable else mode & ~0o111


def changed_but_left_out(before: tuple[Skipped, ...], after: tuple[Skipped, ...]) -> tuple[Skipped, ...]:
    """Left-out paths that differ between the two snapshots (new, gone, or another size or mtime)."""
    earlier = {skip.path: skip for skip in before}
    later = {skip.path: skip for skip in after}
    changed = [skip for skip in after if earlier.get(skip.path) != skip]
    # An ignored directory listed whole, then file by file once it holds a file that is not ignored, is not gone.
    gone = [
        skip
        for skip in before
        if skip.path not in later and not (skip.path.endswith("/") and any(p.startswith(skip.path) for p in later))
    ]
    return tuple(changed + gone)
