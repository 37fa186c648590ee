"""Snapshots of a working tree as commits in a shadow repository, and what changed between two of them.

A snapshot holds every file git would see with the project's ignore rules, untracked ones included, ignored
ones and the project's .git left out; it works the same in a directory that is not a git repository. Files
over a size limit and nested repositories are left out too, and listed in the snapshot's commit message, so
an undo knows it cannot vouch for them.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from dataclasses import astuple
from pathlib import Path

from mini_agent.undo.changes import IGNORED, Change, Delta, Skipped, covered_by, parse_raw_diff, stamp_of, unsnapshotted
from mini_agent.undo.modes import Modes
from mini_agent.undo.shadow import (
    GIT_TIMEOUT,
    REF,
    ZERO_OID,
    ShadowGit,
    SnapshotError,
    TooCostly,
    project_root,
    store_for,
)

MAX_FILE_BYTES = 50 * 1024 * 1024
"""Larger files are left out of snapshots, so one log file or data dump cannot balloon the store."""
MAX_NEW_FILES = 200_000
"""A snapshot that would hash more files than this is refused: the directory is likely home, not a project."""
_HEADER = "mini-agent snapshot"
STRAY_REF = "refs/mini-agent/stray"
"""Keeps reachable a snapshot taken while another session's moved the main ref (for its turn's undo)."""


class Snapshots:
    """Takes snapshots of `work_tree` into the bare repository `store` and restores files from them."""

    def __init__(
        self,
        work_tree: Path,
        store: Path,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
        max_new_files: int = MAX_NEW_FILES,
        timeout: float = GIT_TIMEOUT,
        private: tuple[Path, ...] = (),
    ) -> None:
        """`private`: directories never snapshotted nor reported even when inside the work tree (the store
        itself always is one): mini-agent's data directory, whose sessions and snapshots change every turn."""
        self.git = ShadowGit(work_tree, store, timeout)
        self._private = private_prefixes(self.git.work_tree, (store, *private))
        self._exclusions = tuple(f"--exclude=/{escape_pattern(prefix)}" for prefix in self._private)
        self.max_file_bytes = max_file_bytes
        self.max_new_files = max_new_files
        self.problem = ""
        """Why the last take() returned None."""
        self.skipped: tuple[Skipped, ...] = ()
        """What the last successful take() left out."""
        self._disabled = ""
        self._skipped_by_commit: dict[str, tuple[Skipped, ...]] = {}
        self._modes_by_commit: dict[str, Modes | None] = {}

    @property
    def work_tree(self) -> Path:
        return self.git.work_tree

    def take(self) -> str | None:
        """A snapshot of the tree as it is now (a commit id), or None with the reason in `problem`."""
        if self._disabled:
            self.problem = self._disabled
            return None
        try:
            commit, self.skipped = self._take()
        except TooCostly as error:
            self.problem = self._disabled = f"{error}; snapshots are off for this session"
            return None
        except SnapshotError as error:
            self.problem = str(error)
            return None
        except Exception as error:  # a failing snapshot must never stop the user's turn
            self.problem = f"{type(error).__name__}: {error}"
            return None
        self.problem = ""
        self._skipped_by_commit[commit] = self.skipped
        return commit

    def changes(self, before: str, after: str) -> list[Change]:
        """Every file that differs between two snapshots, except paths either of them left out."""
        return [delta.change for delta in self.deltas(before, after)]

    def deltas(self, before: str, after: str, *, covered_only: bool = True) -> list[Delta]:
        """The paths that differ between two snapshots with both entries; covered_only drops left-out paths."""
        if before == after:  # a turn that changed nothing ends on the snapshot it began with (`_take`)
            return []
        raw = self.git.run("diff-tree", "-r", "-z", "--no-renames", before, after)
        deltas = parse_raw_diff(raw)
        if not covered_only:
            return deltas
        left_out = unsnapshotted(self.skipped_in(before) + self.skipped_in(after))
        return [delta for delta in deltas if not covered_by(os.fsdecode(delta.path), left_out)]

    def skipped_in(self, commit: str) -> tuple[Skipped, ...]:
        """The paths a snapshot left out, read back from its commit message."""
        if commit not in self._skipped_by_commit:
            self._read_record(commit)
        return self._skipped_by_commit[commit]

    def modes_in(self, commit: str) -> Modes | None:
        """The permission bits a snapshot recorded; None for one taken before they were recorded."""
        if commit not in self._modes_by_commit:
            self._read_record(commit)
        return self._modes_by_commit[commit]

    def _read_record(self, commit: str) -> None:
        """Both halves of a snapshot's record from one read of its commit (a git process)."""
        record = self._record(commit)
        modes = Modes.from_json(record.get("modes"))
        self._skipped_by_commit[commit] = tuple(Skipped(*fields) for fields in record.get("skipped", []))
        self._modes_by_commit[commit] = modes

    def mode_changes(self, before: str, after: str) -> list[tuple[bytes, int, int]]:
        """(path, mode before, mode after) for files whose permission bits alone changed between two snapshots."""
        old, new = self.modes_in(before), self.modes_in(after)
        if old is None or new is None:
            return []
        changes = []
        for path in sorted(old.other.keys() | new.other.keys()):
            known = old.other.get(path, new.other.get(path))
            executable = bool(known is not None and known & stat.S_IXUSR)
            was, now = old.of(path, executable), new.of(path, executable)
            if was != now:
                changes.append((os.fsencode(path), was, now))
        if not changes:
            return []
        # Files whose content or kind changed too are restored as deltas; left-out files are not restored.
        differ = set(self.git.run("diff-tree", "-r", "-z", "--name-only", "--no-renames", before, after).split(b"\0"))
        left_out = unsnapshotted(self.skipped_in(before) + self.skipped_in(after))
        return [
            change for change in changes if change[0] not in differ and not covered_by(os.fsdecode(change[0]), left_out)
        ]

    def _record(self, commit: str) -> dict:
        _headers, _title, body = self.git.run("cat-file", "commit", commit).split(b"\n\n", 2)
        return json.loads(body)

    def _base(self) -> tuple[str, Modes | None]:
        """The snapshot the store's ref names (the one its index was written with) and its modes."""
        try:
            head = (self.git.store / REF).read_text().strip()
        except FileNotFoundError:
            return ZERO_OID, None
        except OSError:
            head = self.git.run("rev-parse", "--verify", "-q", REF).decode().strip()
        try:
            return head, self.modes_in(head)
        except (SnapshotError, ValueError, KeyError, TypeError):
            return head, None  # a damaged record: every file is looked at again

    def _take(self) -> tuple[str, tuple[Skipped, ...]]:
        self.git.ensure_store()
        # git writes index.lock beside the index: a private copy means two sessions on one project never
        # block each other, and a crash leaves no stale lock behind. copy2 keeps the mtime git's racy check needs.
        index = self.git.store / f"index-{os.getpid()}-{os.urandom(4).hex()}.tmp"
        began = time.time_ns()
        try:
            if self.git.index.exists():
                shutil.copy2(self.git.index, index)
            base, modes = self._base()  # read after the index copy: the index is never newer than its modes
            listings = [
                ("ls-files", "-z", "--others", "--exclude-standard", *self._exclusions),
                ("diff-files", "-z", "--name-only", "--no-renames"),  # stat-dirty too: a chmod, same content
                ("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", *self._exclusions),
            ]
            if modes is None:
                listings.append(("ls-files", "-z"))  # no modes to carry over: look at every file once
            untracked, dirty, ignored, *everything = self.git.run_together(*listings, index=index)
            listed = sorted(set(self._public(untracked) + self._public(dirty)))
            add, remove, skipped, seen = self._sort_out(listed)
            if len(add) > self.max_new_files:
                raise TooCostly(
                    f"too many files to snapshot in {self.work_tree} ({len(add):,} new or changed, "
                    f"the limit is {self.max_new_files:,})"
                )
            looked_at = {os.fsencode(path) for path in modes.racy} if modes is not None else set()
            for chunk in everything:
                looked_at.update(filter(None, chunk.split(b"\0")))
            seen.update(self._lstat(sorted(looked_at - set(listed))))
            base_modes, modes = modes, modes.update(seen, began) if modes is not None else Modes.first(seen, began)
            skipped += self._ignored(ignored)
            if not add and not remove and base != ZERO_OID and modes == base_modes:
                if tuple(skipped) == self.skipped_in(base):
                    # The tree, the modes and what is left out are as the store's last snapshot has them (its index
                    # is the one just listed against): that snapshot is this one, without three more git runs.
                    return base, tuple(skipped)
            if remove:
                # --index-info, because `update-index --remove` refuses a tracked file that became a directory.
                removals = b"".join(b"0 " + ZERO_OID.encode() + b"\t" + path + b"\0" for path in remove)
                self.git.run("update-index", "-z", "--index-info", input=removals, index=index)
            if add:
                self.git.run("update-index", "--add", "--replace", "-z", "--stdin", input=b"\0".join(add), index=index)
            tree = self.git.run("write-tree", index=index).decode().strip()
            record = {"skipped": [astuple(skip) for skip in skipped], "modes": modes.to_json()}
            message = f"{_HEADER}\n\n{json.dumps(record)}"
            commit = self.git.run("commit-tree", tree, "-m", message, index=index).decode().strip()
            self._modes_by_commit[commit] = modes
            try:
                # Only over the snapshot this one started from: an index newer than the ref's modes would hide
                # a chmod another session saw. A snapshot that lost that race is kept under another ref.
                self.git.run("update-ref", "-m", "snapshot", REF, commit, base, index=index)
            except SnapshotError:
                self.git.run("update-ref", "-m", "snapshot", STRAY_REF, commit, index=index)
            else:
                os.replace(index, self.git.index)
        finally:
            index.unlink(missing_ok=True)
        return commit, tuple(skipped)

    def _sort_out(
        self, paths: list[bytes]
    ) -> tuple[list[bytes], list[bytes], list[Skipped], dict[str, os.stat_result | None]]:
        """Split what git listed into files to (re)hash, entries to drop, paths to leave out, and what lstat saw."""
        root = os.fsencode(self.work_tree)
        add: list[bytes] = []
        remove: list[bytes] = []
        skipped: list[Skipped] = []
        seen: dict[str, os.stat_result | None] = {}
        for path in paths:
            full = os.path.join(root, path.rstrip(b"/"))
            try:
                info = os.lstat(full)
            except (FileNotFoundError, NotADirectoryError):
                remove.append(path)
                seen[os.fsdecode(path)] = None
                continue
            seen[os.fsdecode(path)] = info
            if path.endswith(b"/"):  # ls-files lists an untracked directory only when it is a repository
                skipped.append(Skipped(os.fsdecode(path), "a nested git repository", stamp_of(info)))
            elif stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes:
                limit = self.max_file_bytes / 1024 / 1024
                skipped.append(Skipped(os.fsdecode(path), f"larger than {limit:g} MB", stamp_of(info)))
                remove.append(path)
            elif stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode):
                add.append(path)
            else:  # a tracked file replaced by a directory (its files are listed on their own), or a fifo
                remove.append(path)
        return add, remove, skipped, seen

    def _public(self, listing: bytes) -> list[bytes]:
        """The paths of a NUL-separated listing outside the private directories."""
        return [path for path in listing.split(b"\0") if path and not path.startswith(self._private)]

    def _lstat(self, paths: list[bytes]) -> dict[str, os.stat_result | None]:
        root = os.fsencode(self.work_tree)
        seen: dict[str, os.stat_result | None] = {}
        for path in paths:
            try:
                seen[os.fsdecode(path)] = os.lstat(os.path.join(root, path))
            except OSError:
                seen[os.fsdecode(path)] = None
        return seen

    def _ignored(self, listing: bytes) -> list[Skipped]:
        """What the project's ignore rules keep out, with stamps: an ignored directory's changes when files were
        added or removed directly in it, an ignored file's whenever it changed."""
        root = os.fsencode(self.work_tree)
        found = []
        for path in self._public(listing):
            try:
                info = os.lstat(os.path.join(root, path.rstrip(b"/")))
            except OSError:
                continue
            found.append(Skipped(os.fsdecode(path), IGNORED, stamp_of(info)))
        return found


def project_snapshots(data_dir: Path, cwd: Path) -> Snapshots:
    """The snapshots of the project holding cwd, in its store under data_dir, which they leave out."""
    root = project_root(Path(cwd))
    return Snapshots(root, store_for(Path(data_dir), root), private=(Path(data_dir),))


def private_prefixes(work_tree: Path, directories: tuple[Path, ...]) -> tuple[bytes, ...]:
    """Each directory inside the work tree as a relative path ending in "/"."""
    top = os.path.realpath(work_tree)
    prefixes = []
    for directory in directories:
        real = os.path.realpath(directory)
        if real != top and real.startswith(top.rstrip(os.sep) + os.sep):
            prefixes.append(os.fsencode(os.path.relpath(real, top)) + b"/")
    return tuple(prefixes)


def escape_pattern(prefix: bytes) -> str:
    """A path as a gitignore pattern that matches it literally."""
    text = os.fsdecode(prefix)
    return "".join("\\" + char if char in "\\*?[]!# " else char for char in text)
