"""Where a repository's git files really are, as git itself finds them: the git dir (a `.git` directory, or the
one a `gitdir:` pointer file names), its common dir (`commondir`), the config files git reads (the common dir's
config, the worktree's config.worktree, and every file they include), and the control paths: the files that make
git run programs (config, hooks, filter selections) or decide where git reads them from.

The sandbox keeps the control paths read-only and puts back what a command changed there; the shell classifier
reads the same config files to see what a "read-only" git command would run. Only the file system is read.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

CONTROL = ("config", "config.worktree", "commondir", "hooks", "info", "modules", "worktrees")
"""Inside a git dir: config (fsmonitor, pagers, filters, hooksPath...), the worktree's config, `commondir` (moves
where config and hooks are read), the hooks, `info/` (attributes select filter and diff drivers), and the git dirs
of submodules and linked worktrees (each with their own config, hooks and commondir)."""
ORDINARY = frozenset(
    "index HEAD ORIG_HEAD FETCH_HEAD MERGE_HEAD MERGE_MSG MERGE_MODE MERGE_RR MERGE_AUTOSTASH AUTO_MERGE "
    "CHERRY_PICK_HEAD REVERT_HEAD REBASE_HEAD BISECT_LOG BISECT_START BISECT_TERMS BISECT_EXPECTED_REV "
    "BISECT_ANCESTORS_OK BISECT_NAMES COMMIT_EDITMSG TAG_EDITMSG NOTES_EDITMSG EDIT_DESCRIPTION SQUASH_MSG "
    "objects refs logs packed-refs description shallow gc.pid gc.log sequencer rebase-merge rebase-apply "
    "lost-found rr-cache branches remotes lfs annex svn fsmonitor--daemon fsmonitor--daemon.ipc".split()
)
"""Entries of a git dir that ordinary work (add, commit, branch, checkout, merge, stash, fetch, gc) creates or
changes; lock files (`*.lock`) too. Anything else appearing there is worth a human's look."""
CONTAINERS = ("modules", "worktrees")
"""Control paths that hold other git dirs: each entry's own control files (`INNER`) are control paths too, while
the rest of an entry (a submodule's objects and index) is its ordinary work."""
INNER = ("config", "config.worktree", "commondir", "hooks", "info")
QUARANTINE = "mini-agent-quarantine"
"""Inside the git dir: where the sandbox moves what a command planted among the control paths."""
INCLUDE_DEPTH = 10
"""git's own limit on nested includes."""
POINTER = re.compile(r"gitdir:\s*(.+?)\s*$")


def read_small(path: Path, limit: int = 200_000) -> bytes | None:
    """A regular file's first `limit` bytes (through symlinks, as git reads it), never blocking on a FIFO a
    command left in its place; None for anything else."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        chunks, left = [], limit
        while left > 0:
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(descriptor)


def read_text(path: Path, limit: int = 200_000) -> str | None:
    data = read_small(path, limit)
    return None if data is None else data.decode(errors="replace")


def git_dir(directory: Path) -> Path | None:
    """The git dir of a repository whose top is `directory` (its `.git` directory, or where its `.git` file
    points), symlinks resolved; None when `directory` has no `.git`."""
    dot = directory / ".git"
    if dot.is_dir():
        return Path(os.path.realpath(dot))
    text = read_text(dot, 4096)
    if text is None:
        return None
    match = POINTER.match(text.strip())
    return Path(os.path.realpath(directory / match[1])) if match else None


def common_dir(git: Path) -> Path:
    """Where a git dir's shared files (config, hooks, objects, refs) are: what its `commondir` names, else itself."""
    text = (read_text(git / "commondir", 4096) or "").strip()
    return Path(os.path.realpath(git / text)) if text else git


def enclosing(start: Path) -> tuple[Path, Path] | None:
    """The (top, git dir) of the repository `start` is in, looking upwards as git does; None outside any."""
    for directory in (start, *start.parents):
        found = git_dir(directory)
        if found is not None:
            return directory, found
        if _bare(directory):  # git takes a directory that looks like a git dir itself as a bare repository
            return directory, Path(os.path.realpath(directory))
        if (directory / ".git").exists():  # a `.git` git does not understand: it stops there too
            return None
    return None


def _bare(directory: Path) -> bool:
    """Whether git would take `directory` itself for a git dir: a HEAD, and objects and refs (here or through
    its commondir)."""
    if not (directory / "HEAD").is_file():
        return False
    common = common_dir(directory)
    return (common / "objects").is_dir() and (common / "refs").is_dir()


def git_dirs(top: Path) -> tuple[Path, ...]:
    """The git dir of the repository at `top` and its common dir when that is elsewhere, each once."""
    found = git_dir(top)
    if found is None:
        return ()
    return tuple(dict.fromkeys((found, common_dir(found))))


def control_paths(top: Path, dirs: tuple[Path, ...] | None = None) -> tuple[Path, ...]:
    """Every control path of the repository at `top`, existing or not (a `commondir` planted later counts), and
    the `.git` pointer file itself when `top/.git` is one. `dirs`: its `git_dirs`, when the caller has them."""
    paths = []
    for directory in git_dirs(top) if dirs is None else dirs:
        paths += [directory / name for name in CONTROL]
        for container in CONTAINERS:
            try:
                names = sorted(os.listdir(directory / container))
            except OSError:
                continue
            paths += [directory / container / entry / name for entry in names for name in INNER]
    if (top / ".git").is_file():
        paths.append(Path(os.path.realpath(top)) / ".git")
    return tuple(dict.fromkeys(paths))


def config_files(start: Path) -> tuple[Path, ...]:
    """The repository config files git reads for a command run in `start`: the common dir's config, the
    worktree's config.worktree, and the files they include (`include.path`, `includeIf.*.path`, whatever the
    condition), in that order. Empty outside a repository."""
    found = enclosing(start)
    if found is None:
        return ()
    return repository_config_files(found[1])


def repository_config_files(git: Path) -> tuple[Path, ...]:
    """The config files of the repository whose git dir is `git` (see `config_files`)."""
    common = common_dir(git)
    files = [common / "config", git / "config.worktree"]
    if common != git:
        files.append(common / "config.worktree")
    return tuple(dict.fromkeys(files))


def includes(path: Path, entries: tuple[tuple[str, str | None], ...]) -> list[Path]:
    """The files a config file includes, relative to its own directory as git resolves them (`~/` too)."""
    found = []
    for key, value in entries:
        if value and (key == "include.path" or (key.startswith("includeif.") and key.endswith(".path"))):
            text = os.path.expanduser(value)
            found.append(Path(os.path.realpath(path.parent / text)))
    return found
