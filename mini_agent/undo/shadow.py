"""A git repository outside the project that records the project's files, blind to the project's own git.

Every run points GIT_DIR at the store and GIT_WORK_TREE at the project, uses an index file inside the store, and
reads no user or system configuration: the project's .git (HEAD, index, refs, hooks, config) is never opened,
except that its info/exclude is read as an ignore list so the snapshot skips what the project ignores.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT = 60.0
"""Seconds one git run may take; a cold snapshot of a large tree is the slowest."""
REF = "refs/mini-agent/snapshots"
"""Updated by every snapshot; its reflog keeps each snapshot reachable, so a git gc would keep them."""
ZERO_OID = "0" * 40

# Whatever the user's configuration says: exact bytes (no CRLF or filter conversion), executable bits and
# symlinks recorded, no hooks, no background maintenance, one reflog entry per snapshot.
_CONFIG = {
    "core.bare": "false",
    "core.hooksPath": os.devnull,
    "core.autocrlf": "false",
    "core.safecrlf": "false",
    "core.fileMode": "true",
    "core.symlinks": "true",
    "core.ignoreCase": "false",
    "core.precomposeUnicode": "false",
    "core.quotePath": "false",
    "core.fsmonitor": "false",
    "core.untrackedCache": "false",
    "core.splitIndex": "false",
    "core.logAllRefUpdates": "always",
    "gc.auto": "0",
    "maintenance.auto": "false",
    "safe.directory": "*",
}
# In info/attributes, which outranks every .gitattributes in the tree: the project's `text`, `eol` or `filter`
# settings must not turn the bytes on disk into different bytes in the snapshot.
_ATTRIBUTES = b"* -text -eol -filter -ident -working-tree-encoding\n"


class SnapshotError(Exception):
    """A snapshot could not be taken, read or restored; the message says why in the user's terms."""


class TooCostly(SnapshotError):
    """The tree is too big to snapshot in time: trying again next turn would only repeat the wait."""


@dataclass(frozen=True)
class Entry:
    """One file as a snapshot records it: git's mode ("100644", "100755", "120000") and blob id."""

    mode: str
    oid: str

    @property
    def executable(self) -> bool:
        return self.mode == "100755"

    @property
    def symlink(self) -> bool:
        return self.mode == "120000"


class ShadowGit:
    """Runs git on `store` (a bare repository) with `work_tree` as its working tree."""

    def __init__(self, work_tree: Path, store: Path, timeout: float = GIT_TIMEOUT) -> None:
        self.work_tree = Path(os.path.abspath(work_tree))
        self.store = Path(os.path.abspath(store))
        self.timeout = timeout
        self.index = self.store / "mini-agent-index"
        self._git = shutil.which("git")
        self._ready = False
        excludes = project_excludes(self.work_tree)
        self._options = [f"{name}={value}" for name, value in _CONFIG.items()]
        self._options.append(f"core.excludesFile={excludes or os.devnull}")
        self._env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
        self._env.update(
            GIT_DIR=str(self.store),
            GIT_WORK_TREE=str(self.work_tree),
            GIT_CONFIG_GLOBAL=os.devnull,
            GIT_CONFIG_NOSYSTEM="1",
            GIT_ATTR_NOSYSTEM="1",
            GIT_NO_REPLACE_OBJECTS="1",
            GIT_TERMINAL_PROMPT="0",
            GIT_AUTHOR_NAME="mini-agent",
            GIT_AUTHOR_EMAIL="mini-agent@localhost",
            GIT_COMMITTER_NAME="mini-agent",
            GIT_COMMITTER_EMAIL="mini-agent@localhost",
            LC_ALL="C",
        )

    def run(self, *args: str, input: bytes = b"", index: Path | None = None) -> bytes:
        """git's stdout; SnapshotError with git's message when it fails, is missing or takes too long."""
        try:
            done = subprocess.run(
                self._command(args),
                input=input,
                capture_output=True,
                env=self._env_for(index),
                cwd=self.work_tree,
                timeout=self.timeout,
            )
        except subprocess.TimeoutExpired:
            raise TooCostly(f"git {args[0]} took longer than {self.timeout:.0f} s") from None
        except OSError as error:
            raise SnapshotError(f"git {args[0]} could not start: {error}") from None
        return _output(args, done.returncode, done.stdout, done.stderr)

    def run_together(self, *commands: tuple[str, ...], index: Path | None = None) -> list[bytes]:
        """The stdout of each command, run side by side: listings that each walk the tree overlap."""
        started: list[tuple[tuple[str, ...], subprocess.Popen]] = []
        try:
            for args in commands:
                process = subprocess.Popen(
                    self._command(args),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=self._env_for(index),
                    cwd=self.work_tree,
                )
                started.append((args, process))
            outputs = []
            for args, process in started:
                try:
                    out, err = process.communicate(timeout=self.timeout)
                except subprocess.TimeoutExpired:
                    raise TooCostly(f"git {args[0]} took longer than {self.timeout:.0f} s") from None
                outputs.append(_output(args, process.returncode, out, err))
            return outputs
        except OSError as error:
            raise SnapshotError(f"git {commands[len(started)][0]} could not start: {error}") from None
        finally:
            for _args, process in started:
                if process.poll() is None:
                    process.kill()
                    process.wait()

    def _command(self, args: tuple[str, ...]) -> list[str]:
        if self._git is None:
            raise SnapshotError("git is not installed (not found on PATH)")
        command = [self._git]
        for option in self._options:
            command += ["-c", option]
        return command + list(args)

    def _env_for(self, index: Path | None) -> dict[str, str]:
        return {**self._env, "GIT_INDEX_FILE": str(index or self.index)}

    def ensure_store(self) -> None:
        """Create the bare store on first use; idempotent, and safe when two sessions start together."""
        if self._ready:
            return
        if self._git is None:
            raise SnapshotError("git is not installed (not found on PATH)")
        if not self.work_tree.is_dir():
            raise SnapshotError(f"{self.work_tree} is not a directory")
        if not (self.store / "HEAD").exists():
            self.store.parent.mkdir(parents=True, exist_ok=True)
            env = {name: value for name, value in self._env.items() if name not in ("GIT_DIR", "GIT_WORK_TREE")}
            try:
                done = subprocess.run(
                    [self._git, "init", "--quiet", "--bare", "--template=", str(self.store)],
                    capture_output=True,
                    env=env,
                    timeout=self.timeout,
                )
            except (OSError, subprocess.TimeoutExpired) as error:
                raise SnapshotError(f"cannot create the snapshot store {self.store}: {error}") from None
            if done.returncode != 0:
                raise SnapshotError(f"cannot create the snapshot store: {done.stderr.decode(errors='replace')}")
        attributes = self.store / "info" / "attributes"
        if not attributes.exists() or attributes.read_bytes() != _ATTRIBUTES:
            attributes.parent.mkdir(exist_ok=True)
            attributes.write_bytes(_ATTRIBUTES)
        self._ready = True


def _output(args: tuple[str, ...], returncode: int, stdout: bytes, stderr: bytes) -> bytes:
    if returncode != 0:
        message = stderr.decode(errors="replace").strip().splitlines()
        raise SnapshotError(f"git {args[0]} failed: {message[-1] if message else f'exit {returncode}'}")
    return stdout


def project_excludes(work_tree: Path) -> Path | None:
    """The project's .git/info/exclude, also for a linked worktree or submodule whose .git is a file."""
    dot_git = work_tree / ".git"
    git_dir = dot_git
    if dot_git.is_file():
        pointer = re.match(r"gitdir: (.*)", dot_git.read_text(errors="replace").strip())
        if pointer is None:
            return None
        git_dir = work_tree / pointer.group(1)
        common = git_dir / "commondir"
        if common.is_file():
            git_dir = git_dir / common.read_text().strip()
    excludes = git_dir / "info" / "exclude"
    return excludes if excludes.is_file() else None


def project_root(cwd: Path) -> Path:
    """The top of the git working tree holding cwd (where bash may change files too), else cwd itself."""
    start = Path(os.path.abspath(cwd))
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return start


def store_for(data_dir: Path, work_tree: Path) -> Path:
    """`<data_dir>/snapshots/<name>-<hash of the path>.git`: one store per project directory, kept across sessions."""
    resolved = os.path.realpath(work_tree)
    digest = hashlib.sha256(os.fsencode(resolved)).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(resolved))[:40] or "root"
    return Path(data_dir) / "snapshots" / f"{name}-{digest}.git"
