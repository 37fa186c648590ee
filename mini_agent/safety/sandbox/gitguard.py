"""What a confined command did to the project's git dir beyond ordinary work, and putting back what it must not
change. Looked at before the command (`GitGuard.take`) and after it (`GitGuard.check`):

- the control paths (`gitrepo.CONTROL`: config, hooks, commondir, info, ...): whatever changed is put back. What
  the command planted (a new `commondir`, a hook in a missing `hooks/`) or wrote (under Landlock, which cannot keep
  them read-only) moves to the git dir's `mini-agent-quarantine/`, and the copy taken before is written again;
- the git dir itself replaced (renamed away under Landlock; bubblewrap pins it): the original is moved back when
  it is still beside it;
- entries ordinary work does not make, appearing in the git dir: reported;
- refs deleted, and object directories or packs removed with no new pack made: reported, each ref with its commit,
  so the history can be named again while its objects remain.

Everything is small or cached: the control paths are fingerprinted (identity, size, times, two levels of
entries) and their contents read again only when that changed; refs and object directories are listed, never
read whole. The caller tells the human what `check` returns.
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from mini_agent.safety import gitrepo
from mini_agent.safety.sandbox import gitkeep
from mini_agent.safety.sandbox.gitcapture import TOO_BIG, Capture, capture_cached, forget_capture, write_capture
from mini_agent.safety.sandbox.gitrefs import listed_refs
from mini_agent.safety.sandbox.watch import Fingerprint, look
from mini_agent.safety.workspace import within

REPLACED_BY_LINK = "a directory on its way was replaced by a link"


@dataclass
class GitChanges:
    """What `GitGuard.check` found; empty when the command only did ordinary work."""

    put_back: list[str] = field(default_factory=list)
    """Control paths the command changed, as shown to the human, now as they were before."""
    not_put_back: list[str] = field(default_factory=list)
    """Control paths the command changed that could not be put back (too big, or the write failed)."""
    quarantine: Path | None = None
    replaced: str | None = None
    """What happened to the git dir itself, when the command replaced it."""
    unexpected: list[str] = field(default_factory=list)
    """New entries in the git dir that ordinary work does not make."""
    deleted_refs: list[tuple[str, str]] = field(default_factory=list)
    objects_removed: str | None = None

    def __bool__(self) -> bool:
        return bool(
            self.put_back or self.not_put_back or self.replaced or self.unexpected or self.deleted_refs
        ) or bool(self.objects_removed)

    def notice(self) -> str:
        """One paragraph for the human (and the model): what changed under .git and what was done about it."""
        parts = []
        if self.replaced:
            parts.append(self.replaced)
        if self.put_back:
            where = f"; the command's versions are in {self.quarantine}" if self.quarantine else ""
            parts.append(f"changed git control files, now put back as they were: {', '.join(self.put_back)}{where}")
        if self.not_put_back:
            parts.append(f"changed git control files that could NOT be put back: {', '.join(self.not_put_back)}")
        if self.unexpected:
            parts.append(f"added to the git dir what ordinary git work does not: {', '.join(self.unexpected)}")
        if self.deleted_refs:
            shown = ", ".join(f"{name} (was {sha[:12]})" for name, sha in self.deleted_refs[:10])
            more = f" and {len(self.deleted_refs) - 10} more" if len(self.deleted_refs) > 10 else ""
            parts.append(f"deleted git refs: {shown}{more}; `git branch NAME COMMIT` names a commit again")
        if self.objects_removed:
            parts.append(self.objects_removed)
        return "A sandboxed command " + "; it ".join(parts) + "."


@dataclass
class GitGuard:
    """The state of one repository's git dir before a command, to compare with after it."""

    top: Path
    dirs: tuple[Path, ...] = ()
    identities: dict[Path, tuple[int, int] | None] = field(default_factory=dict)
    entries: dict[Path, frozenset[str]] = field(default_factory=dict)
    controls: dict[Path, tuple[Fingerprint, Capture]] = field(default_factory=dict)
    containers: dict[Path, frozenset[str] | None] = field(default_factory=dict)
    """`modules/` and `worktrees/`: only the names of their entries (a new one is a new git dir to obey)."""
    refs: dict[str, str] = field(default_factory=dict)
    objects: frozenset[str] = frozenset()
    packs: frozenset[str] = frozenset()
    stashes: int = 0
    head: bytes | None = None
    kept: bool = False
    new_keep: bool = False
    """The keep was made by this look: the plan made before it could not list it as read-only."""
    """Every object file and reflog has a second name in the keep (`gitkeep`)."""

    @classmethod
    def take(cls, top: Path, writable: tuple[Path, ...]) -> GitGuard:
        """Look at the repository whose top is `top`: at its git dirs the command can write in (below one of the
        `writable` roots). Nothing to guard when there are none (no repository, or a worktree of one elsewhere)."""
        guard = cls(top)
        dirs = gitrepo.git_dirs(top)
        guard.dirs = dirs if dirs and any(within(dirs[-1], root) for root in writable) else ()
        for directory in guard.dirs:
            guard.identities[directory] = _identity(directory)
            guard.entries[directory] = _names(directory)
        for path in gitrepo.control_paths(top, guard.dirs) if guard.dirs else ():
            if path.name in gitrepo.CONTAINERS and path.parent in guard.dirs:
                guard.containers[path] = _names(path) if os.path.isdir(path) else None
            else:
                guard.controls[path] = capture_cached(path)
        if guard.dirs:
            common = guard.dirs[-1]
            guard.refs = listed_refs(common) or {}
            guard.stashes = _lines(common / "logs" / "refs" / "stash")
            guard.head = _read(common / "HEAD")
            guard.new_keep = not gitkeep.keep_dir(common).is_dir()
            guard.kept = gitkeep.sync(common)
            guard.new_keep = guard.new_keep and gitkeep.keep_dir(common).is_dir()
            guard.objects = _names(common / "objects")
            guard.packs = frozenset(name for name in _names(common / "objects" / "pack") if name.endswith(".pack"))
        return guard

    def check(self) -> GitChanges:
        """Compare with now; put back the control paths. Call once, after the command and all it started ended."""
        found = GitChanges()
        if not self.dirs:
            return found
        self._git_dir_replaced(found)
        if any(_identity(directory) != self.identities.get(directory) for directory in self.dirs):
            return found  # gone for good: nothing below it is the repository any more, and nothing is written there
        for path, (seen, before) in self.controls.items():
            if look(path) == seen:
                continue
            shown = _shown(path, self.top)
            if not _straight(path):
                found.not_put_back.append(f"{shown} ({REPLACED_BY_LINK})")
                forget_capture(path)
                continue
            if before is TOO_BIG:
                found.not_put_back.append(f"{shown} (too big to keep a copy of)")
                forget_capture(path)
                continue
            try:
                found.quarantine = _put_back(path, before, self._quarantine(found), self.top)
                found.put_back.append(shown)
            except OSError as exc:
                found.not_put_back.append(f"{shown} ({exc.strerror or exc})")
            forget_capture(path)
        for path, names in self.containers.items():
            if names is None and os.path.lexists(path):  # the whole container is new
                added = [path]
            else:
                added = [path / name for name in sorted(_names(path) - (names or frozenset()))]
            for entry in added:
                if not _straight(entry):
                    found.not_put_back.append(f"{_shown(entry, self.top)} ({REPLACED_BY_LINK})")
                    continue
                try:
                    _put_back(entry, None, self._quarantine(found), self.top)
                    found.put_back.append(_shown(entry, self.top))
                except OSError as exc:
                    found.not_put_back.append(f"{_shown(entry, self.top)} ({exc.strerror or exc})")
        for directory in self.dirs:
            new = _names(directory) - self.entries.get(directory, frozenset())
            found.unexpected += [_shown(directory / name, self.top) for name in sorted(new) if _unexpected(name)]
        common = self.dirs[-1]
        after = listed_refs(common)
        if self.refs and after is not None:
            popped = {"refs/stash"} if self.stashes <= 1 else set()  # `git stash pop` of the only stash
            found.deleted_refs = [
                (name, sha) for name, sha in sorted(self.refs.items()) if name not in after and name not in popped
            ]
        objects = _names(common / "objects")
        packs = frozenset(name for name in _names(common / "objects" / "pack") if name.endswith(".pack"))
        gone = (self.objects - objects) | {f"pack/{name}" for name in self.packs - packs}
        if (gone and not packs - self.packs) or not (common / "refs").is_dir():  # gc makes a new pack for them
            what = (
                f"removed {len(gone)} entries of git's object store ({', '.join(sorted(gone)[:5])}"
                f"{', ...' if len(gone) > 5 else ''}) without packing them"
            )
            found.objects_removed = f"{what}: {self._restore(found, after or {})}"
        return found

    def _restore(self, found: GitChanges, after: dict[str, str]) -> str:
        """History was destroyed: link the kept objects and reflogs back, write the deleted refs and HEAD again."""
        common = self.dirs[-1]
        if not self.kept:
            return "there were too many objects to keep copies of, so commits may be lost for good"
        restored = gitkeep.restore(common)
        for name, sha in found.deleted_refs:
            path = common / name
            if name not in after and not os.path.lexists(path) and _straight(path):
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(sha + "\n")
                except OSError:
                    continue
        for name in ("refs/heads", "refs/tags"):
            (common / name).mkdir(parents=True, exist_ok=True)
        if self.head is not None and not (common / "HEAD").exists():
            (common / "HEAD").write_bytes(self.head)
        found.deleted_refs = [(name, sha) for name, sha in found.deleted_refs if not (common / name).exists()]
        return f"{restored} kept object files and reflogs, and the deleted refs, were put back"

    def _quarantine(self, found: GitChanges) -> Path:
        if found.quarantine is None:
            stamp = time.strftime("%Y%m%d-%H%M%S") + f"-{time.monotonic_ns() % 1_000_000:06d}"
            found.quarantine = self.dirs[-1] / gitrepo.QUARANTINE / stamp
        return found.quarantine

    def _git_dir_replaced(self, found: GitChanges) -> None:
        """The git dir renamed or removed (Landlock; bubblewrap pins it): move the original back if it is beside."""
        for directory in self.dirs:
            before = self.identities.get(directory)
            now = _identity(directory)
            if before is None or now == before:
                continue
            original = _find(directory.parent, before)
            if original is None:
                found.replaced = f"deleted or moved away the git dir {_shown(directory, self.top)}"
                continue
            try:
                if os.path.lexists(directory):
                    target = original / gitrepo.QUARANTINE / f"replacement-{time.monotonic_ns()}"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(directory, target)
                os.rename(original, directory)
            except OSError as exc:
                found.replaced = (
                    f"moved the git dir {_shown(directory, self.top)} to {original} and it could not be moved "
                    f"back ({exc.strerror or exc})"
                )
                continue
            found.replaced = f"moved the git dir {_shown(directory, self.top)} away; it was moved back"


def _straight(path: Path) -> bool:
    """Whether the directories leading to `path` are what they were named as (no link put in on the way), so that
    writing there writes in the repository and nowhere a command chose."""
    parent = path.parent
    return os.path.realpath(parent) == str(parent)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


def _find(directory: Path, identity: tuple[int, int]) -> Path | None:
    """The entry of `directory` with this identity (a renamed git dir stays beside where it was)."""
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False) and (entry.stat(follow_symlinks=False).st_dev,
                                                            entry.inode()) == identity:  # fmt: skip
                    return Path(entry.path)
    except OSError:
        return None
    return None


def _read(path: Path) -> bytes | None:
    return gitrepo.read_small(path, 4096)


def _lines(path: Path) -> int:
    return (gitrepo.read_small(path, 1_000_000) or b"").count(b"\n")


def _names(directory: Path) -> frozenset[str]:
    try:
        return frozenset(os.listdir(directory))
    except OSError:
        return frozenset()


def _unexpected(name: str) -> bool:
    return not (
        name in gitrepo.ORDINARY
        or name in gitrepo.CONTROL  # put back above, or reported as not put back
        or name in (gitrepo.QUARANTINE, gitkeep.KEEP)
        or name.endswith(".lock")
        or name.startswith(("tmp_", "index.stash.", "next-index-"))
    )


def _shown(path: Path, top: Path) -> str:
    real = Path(os.path.realpath(top))
    return path.relative_to(real).as_posix() if path.is_relative_to(real) else str(path)


def _put_back(path: Path, before: Capture, quarantine: Path, top: Path) -> Path:
    """Move what is at `path` now into the quarantine, and write `before` there again."""
    if os.path.lexists(path):
        target = quarantine / _shown(path, top).lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(path, target)
        except OSError:
            shutil.move(str(path), str(target))
    if before is not None:
        write_capture(path, before)
    return quarantine
