"""Where the agent may change things: the working directory, scratch space, and places that are never routine.

The permission policy asks which paths a call touches; this module answers where each path really is
(`~` expanded, relative paths taken from the shell's directory, symlinks resolved) and whether it is inside
the workspace, protected, or likely to hold a secret. Resolving symlinks reads the file system; nothing
here writes, prompts or touches the network.
"""

from __future__ import annotations

import fnmatch
import os
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from mini_agent.safety.credential_places import AGENT_DATA, NOT_SECRET, place_of, secret_name, why
from mini_agent.safety.installation import inside_installation

# Files a shell reads at start-up: writing them runs code in the user's next terminal.
SHELL_STARTUP = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".zlogout",
    ".cshrc",
    ".tcshrc",
    ".login",
    ".kshrc",
    ".inputrc",
    ".config/fish/config.fish",
)
# Where credentials live (one list for read_file, the shell classifier and the sandbox): credential_places.py.


def home_secret(path: Path, home: Path) -> str | None:
    """The credential place under `home` that holds a resolved path (`.ssh`, `.netrc`, `.bash_history`), or None."""
    if not within(path, home):
        return None
    return place_of(path.relative_to(home))


# System trees no project task needs to write.
SYSTEM_ROOTS = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/sys", "/proc", "/dev", "/var")
# Device files that are harmless to write to: discarding output, or the terminal.
HARMLESS_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero")

PROCESS_STARTED = time.time()
"""When this module was first imported: close to the process's start, the default start of a session."""
LINK_HOPS_LIMIT = 8


def _realpath(path: Path) -> Path:
    """os.path.realpath, which raises when a link is swapped for a file while it reads it (EINVAL): then the
    path as written. Safe for the policy: the file tools open the judged path without following any link."""
    for _ in range(LINK_HOPS_LIMIT):
        try:
            return Path(os.path.realpath(path))
        except OSError:
            continue
    return Path(os.path.normpath(path))


@dataclass(frozen=True)
class Workspace:
    """The working directory the session may change, seen from where the shell currently is."""

    root: Path
    """The session's working directory, symlinks resolved: changes inside it are routine."""
    home: Path = field(default_factory=lambda: Path(os.path.realpath(Path.home())))
    cwd: Path | None = None
    """Where relative paths start (the bash tool's current directory); `root` when None."""
    scratch: tuple[Path, ...] = ()
    """Directories that count as inside too: the system's temporary directory."""
    config_files: tuple[Path, ...] = ()
    """The agent's own configuration: it must not grant itself permissions by editing them. A directory here
    counts with everything below it (the user directory's commands, the data directory's trust file)."""
    session_started: float = PROCESS_STARTED
    """When the session began (epoch seconds): a file whose ctime is later was written or changed during it,
    so running it runs code the agent wrote (ctime cannot be set back by `touch -d`)."""
    links: tuple[tuple[Path, Path], ...] = ()
    """Links a command creates before a later part of it runs, (link, what it points to), both resolved:
    paths through them resolve to the target although the link does not exist yet."""
    pins: tuple[tuple[str, Path], ...] = ()
    """Path arguments already resolved, (text, resolved path): the policy judges the very resolution the file
    tool then opens (a symlink swapped in meanwhile changes neither)."""
    private: tuple[Path, ...] = ()
    """mini-agent's own data and cache directories as configured (resolved): sessions, the prompt history, trust
    decisions. Reading them asks like reading credentials; writing them is protected."""

    @classmethod
    def at(
        cls,
        root: Path,
        cwd: Path | None = None,
        config_files: tuple[Path, ...] = (),
        session_started: float | None = None,
        private: tuple[Path, ...] = (),
    ) -> Workspace:
        """The workspace of a session in `root`, with the system temp directory as scratch space; the session
        started at `session_started` (epoch seconds), by default when this process started."""
        real = Path(os.path.realpath(root))
        return cls(
            root=real,
            cwd=Path(os.path.realpath(cwd)) if cwd else None,
            scratch=(Path(os.path.realpath(tempfile.gettempdir())),),
            config_files=tuple(Path(os.path.realpath(path)) for path in config_files),
            session_started=PROCESS_STARTED if session_started is None else session_started,
            private=tuple(Path(os.path.realpath(path)) for path in private),
        )

    def resolve(self, text: str) -> Path:
        """Where a path argument really points: `~` expanded, relative to the shell's directory, symlinks resolved."""
        for pinned, path in self.pins:
            if pinned == text:
                return path
        if text == "~" or text.startswith("~/"):
            text = str(self.home) + text[1:]
        path = Path(text)
        if not path.is_absolute():
            path = (self.cwd or self.root) / path
        return self.through_links(_realpath(path))

    def through_links(self, path: Path) -> Path:
        """A resolved path, with the links created earlier in the same command followed (latest first)."""
        for _ in range(LINK_HOPS_LIMIT if self.links else 0):
            for link, target in reversed(self.links):
                if path == link or link in path.parents:
                    path = Path(os.path.realpath(target / path.relative_to(link)))
                    break
            else:
                return path
        return path

    def linked(self, link: Path, target: Path) -> Workspace:
        """This workspace after a command creates `link` pointing at `target` (both resolved)."""
        return replace(self, links=(*self.links, (link, target)))

    def inside(self, path: Path) -> bool:
        """Whether a resolved path is in the working directory or scratch space."""
        return any(within(path, base) for base in (self.root, *self.scratch))

    def protected(self, path: Path) -> str | None:
        """Why writing this resolved path is never routine, or None."""
        if str(path) in HARMLESS_DEVICES:
            return None
        parts = path.parts
        if any(within(path, place) for place in self.config_files) or ".mini-agent" in parts:
            return "it is the agent's own configuration"
        if path.name == ".mcp.json" or ".claude" in parts:
            # what the user runs later: MCP servers' commands, commands' allowed-tools, agents, skills, hooks
            return "it is the agent's own configuration (MCP servers, commands, agents, skills or settings)"
        if ".git" in parts[:-1] or (parts and parts[-1] == ".git"):
            return "it is inside a .git directory (the repository's internals)"
        if any(within(path, private) for private in self.private):
            return f"it is {why(AGENT_DATA[0])}"
        if within(path, self.home):
            relative = path.relative_to(self.home).as_posix()
            if relative in SHELL_STARTUP:
                return "it is a shell start-up file"
            place = home_secret(path, self.home)
            if place is not None:
                return f"it is in ~/{place}, which holds {why(place)}"
        for system in SYSTEM_ROOTS:
            if within(path, Path(system)):
                return f"it is a system file under {system}"
        if inside_installation(path):
            return "it is in mini-agent's own installation, whose code runs at mini-agent's next start"
        return None

    def secret(self, path: Path) -> str | None:
        """Why reading this resolved path needs care (a likely secret, a credential place, the agent's own data)."""
        for private in self.private:
            if within(path, private):
                return f"{self.shown(path)} is {why(AGENT_DATA[0])}"
        return secret_reason(path)

    def where(self, path: Path) -> str | None:
        """Why a write to this resolved path needs a human in every mode, or None when it is routine."""
        reason = self.protected(path)
        if reason:
            return f"{path} is protected: {reason}"
        if str(path) in HARMLESS_DEVICES or self.inside(path):
            return None
        return f"{path} is outside the working directory ({self.root})"

    def shown(self, path: Path) -> str:
        """A path as the human reads it: relative inside the workspace, `~/...` under home."""
        if within(path, self.root) and path != self.root:
            return path.relative_to(self.root).as_posix()
        if within(path, self.home) and path != self.home:
            return "~/" + path.relative_to(self.home).as_posix()
        return str(path)


def secret_reason(path: Path | str) -> str | None:
    """Why a file likely holds a secret (a key, a token, a password, what was typed), or None."""
    pure = PurePosixPath(str(path))
    name = pure.name
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in NOT_SECRET):
        return None
    place = place_of(pure)
    if place is None:
        return f"{name} likely holds secrets (keys, tokens or passwords)" if secret_name(name) else None
    if pure.parts[-len(PurePosixPath(place).parts) :] == PurePosixPath(place).parts:
        return f"{place} holds {why(place)}"
    return f"{name} is in {place}/, which holds {why(place)}"


def within(path: Path, base: Path) -> bool:
    """Whether `path` is `base` or below it (both resolved)."""
    return path == base or base in path.parents


def resolve_path(cwd: Path, path: str) -> Path:
    """A path argument as the tools take it: `~` expanded, relative to `cwd`, `..` folded (symlinks kept)."""
    candidate = Path(os.path.expanduser(path))
    if not candidate.is_absolute():
        candidate = cwd / candidate
    return Path(os.path.normpath(candidate))


def project_dirs(cwd: Path, home: Path | None = None) -> list[Path]:
    """Where a project's files may be, nearest first: the working directory up to its repository's root. Outside
    a repository only the working directory: a shared directory above (/tmp) must not lend settings, servers or
    commands to whoever works below it. The home directory is the user's, never a project's."""
    home = Path.home() if home is None else home
    walk: list[Path] = []
    for directory in (cwd, *cwd.parents):
        if directory == home:
            return walk[:1]
        walk.append(directory)
        if (directory / ".git").exists():
            return walk
    return walk[:1]
