"""What a confined command may touch: the levels, the caller's request (`Confinement`), and the concrete plan of
paths every mechanism enforces (`Plan`): writable roots, read-only islands inside them, hidden paths.

Paths are resolved here once (symlinks followed), so the mechanisms only translate a plan into their own terms.
Only paths that exist are listed: a mount or a Landlock rule needs something to attach to.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from mini_agent.safety import gitrepo
from mini_agent.safety.agent_files import AGENT_FILE_NAMES
from mini_agent.safety.credential_places import NOT_SECRET, SANDBOX_HIDDEN
from mini_agent.safety.sandbox import listings
from mini_agent.safety.sandbox.gitkeep import KEEP

Level = Literal["read-only", "workspace-write"]
LEVELS: tuple[Level, ...] = ("read-only", "workspace-write")

HIDDEN_IN_HOME = SANDBOX_HIDDEN
"""Credential places under home that no confined command may read, at any level: the policy's own list
(credential_places.py), histories and mini-agent's data included."""
READ_ONLY_IN_ROOT = AGENT_FILE_NAMES
"""Inside the writable project root: an MCP server, a custom command's allowed-tools, an agent or a skill written
here runs later, outside any sandbox (agent_files.py). So do the git dir's control paths (`gitrepo.CONTROL`:
config, hooks, commondir...)."""
ENV_PREFIX = ".env"
"""Environment files beside the project (`.env*` in home and in the root's ancestors) hold other projects'
secrets."""
_ENV_NAME = re.compile(re.escape(ENV_PREFIX)).match


class AgentPlaces(Protocol):
    """What a confinement needs of the agent's settings (`Settings` has these): its own files and directories."""

    config_files: tuple[Path, ...]
    user_dir: Path
    data_dir: Path


@dataclass(frozen=True)
class Confinement:
    """What the caller asks for one command: a level, the project root, and whether it may use the network."""

    level: Level
    root: Path
    """The project root (writable at workspace-write)."""
    network: bool = False
    read_only_paths: tuple[Path, ...] = ()
    """Extra paths kept read-only inside writable roots (the agent's config files)."""
    hidden_paths: tuple[Path, ...] = ()
    """Extra paths made unreadable (the agent's data dir: sessions, undo snapshots)."""
    home: Path | None = None
    """Default Path.home(); tests pass a fake home."""
    shared_temp_dirs: tuple[Path, ...] | None = None
    """Writable at workspace-write besides the root; None means /tmp and the system temp dir."""

    @classmethod
    def for_agent(cls, level: Level, root: Path, settings: AgentPlaces, network: bool = False) -> Confinement:
        """What a session's commands get: its config files (and the user config dir) and the running installation
        (when it is inside the project: a `.venv` there) read-only, its data dir
        (sessions, undo snapshots) and the warm server's socket directory hidden. The agent, `mini-agent sandbox`
        and `sandbox run` all use this."""
        from mini_agent.safety.installation import installation

        # The installation only strictly inside the root: a virtualenv made in the root itself would make all of it
        # read-only. (Outside the root it is read-only anyway.)
        installed = tuple(path for path in installation() if real(root) in path.parents)
        return cls(
            level,
            root,
            network=network,
            read_only_paths=(*settings.config_files, settings.user_dir, *installed),
            hidden_paths=(settings.data_dir, *_warm_socket_dir()),
        )


@dataclass(frozen=True)
class Plan:
    """The concrete, resolved paths one confined command runs with."""

    level: Level
    network: bool
    root: Path
    tmpdir: Path
    """The private temp dir, exported as TMPDIR; writable at every level."""
    writable: tuple[Path, ...]
    """Directories and files the command may write (besides harmless devices)."""
    read_only: tuple[Path, ...]
    """Existing paths inside a writable one that stay read-only."""
    hidden: tuple[Path, ...]
    """Existing paths the command may not read; each one is a file or a directory."""
    pinned: tuple[Path, ...] = ()
    """Directories inside a writable root that stay writable but may not be renamed or removed (the git dir):
    bubblewrap binds each onto itself, and a mount point cannot be moved."""


def _warm_socket_dir() -> tuple[Path, ...]:
    """The warm server's directory, made now if missing: in /tmp, a command could otherwise plant a listener
    there, and the next `mini-agent` would hand it the environment (the key) and the terminal."""
    from mini_agent.warm.paths import runtime_dir

    directory = runtime_dir()
    return (Path(directory),) if directory else ()


def real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def temp_roots() -> tuple[Path, ...]:
    """The shared temp directories writable at workspace-write: /tmp and the system's temp dir, once each."""
    return tuple(dict.fromkeys(real(path) for path in ("/tmp", tempfile.gettempdir()) if os.path.isdir(path)))


def plan(confinement: Confinement, tmpdir: Path, writable: tuple[Path, ...] = ()) -> Plan:
    """Resolve a confinement into the paths a mechanism enforces, for a command using `tmpdir` as TMPDIR."""
    root = real(confinement.root)
    extra = tuple(real(path) for path in writable if os.path.exists(path))
    if confinement.level == "workspace-write":
        shared = temp_roots() if confinement.shared_temp_dirs is None else map(real, confinement.shared_temp_dirs)
        roots = (root, *shared, real(tmpdir), *extra)
        git_dirs = gitrepo.git_dirs(root)
        protected = protected_paths(confinement, git_dirs)
        kept = [path for path in protected if _inside_any(path, roots) and os.path.lexists(path)]
        read_only = tuple(path for path in kept if not _inside_any(path, tuple(o for o in kept if o != path)))
        pinned = tuple(path for path in git_dirs if path != root and _inside_any(path, roots))
    else:
        roots = (real(tmpdir), *extra)
        read_only = pinned = ()
    return Plan(
        level=confinement.level,
        network=confinement.network,
        root=root,
        tmpdir=real(tmpdir),
        writable=_unique(roots),
        read_only=read_only,
        hidden=hidden_paths(confinement),
        pinned=pinned,
    )


def protected_paths(confinement: Confinement, git_dirs: tuple[Path, ...] | None = None) -> tuple[Path, ...]:
    """What a workspace-write command must not change, existing or not: the agent's config in the root and the
    caller's read-only paths, and the control paths of the root's git dir (a `.git` pointer file included).
    `git_dirs`: the root's, when the caller has them already."""
    root = real(confinement.root)
    git_dirs = gitrepo.git_dirs(root) if git_dirs is None else git_dirs
    paths = [root / name for name in READ_ONLY_IN_ROOT] + [real(path) for path in confinement.read_only_paths]
    keeps = [directory / KEEP for directory in git_dirs]  # the second names of git's history
    return _unique([*paths, *gitrepo.control_paths(root, git_dirs), *keeps])


def hidden_paths(confinement: Confinement) -> tuple[Path, ...]:
    """Existing credential locations, `.env*` files beside the project, and the caller's own hidden paths.
    Which exist is remembered while the directories that say so are unchanged (`listings`)."""
    home = os.path.realpath(confinement.home or Path.home())
    root = real(confinement.root)
    env_files = []
    for directory in (home, *map(str, root.parents)):
        if directory != str(root):  # a session in home: home's .env is the project's own
            found = listings.names(directory, _ENV_NAME)
            env_files += [os.path.join(directory, name) for name in found if not _template(name)]
    # Asked apart: each answer is remembered while the directories on its own paths are unchanged, and the
    # caller's (the warm server's socket dir) or an .env file may sit in /tmp, which changes all the time.
    existing = [
        *listings.existing(_places_in(home)),
        *listings.existing(tuple(env_files)),
        *listings.existing(tuple(os.fspath(path) for path in confinement.hidden_paths)),
    ]
    # The root itself is never hidden whole (then nothing could run); a hidden path above it would hide it.
    kept = [path for path in dict.fromkeys(existing) if path != str(root) and not below(str(root), path)]
    # Only the outermost of nested hidden paths: a mount cannot be made inside the cover of another.
    outermost = [path for path in kept if not any(other != path and below(path, other) for other in kept)]
    return tuple(map(Path, outermost))


@functools.lru_cache(maxsize=8)
def _places_in(home: str) -> tuple[str, ...]:
    return tuple(os.path.join(home, name) for name in HIDDEN_IN_HOME)


def _template(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in NOT_SECRET)


def _unique(paths) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))


def _inside_any(path: Path, bases: tuple[Path, ...]) -> bool:
    """`within` for many bases, on the text of resolved paths: `Path.parents` is slow, and this runs per command."""
    text = str(path)
    return any(text == str(base) or text.startswith(str(base).rstrip("/") + "/") for base in bases)


def below(path: str, base: str) -> bool:
    """Whether the resolved `path` is strictly inside `base`, on their text (`Path.parents` is slow, and the
    sandbox asks this many times per command)."""
    return path != base and path.startswith(base.rstrip("/") + "/")
