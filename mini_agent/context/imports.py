"""`@path` imports in instruction files, as Claude Code reads them in CLAUDE.md: which files an instruction file
pulls in, and which it may not.

An import is an `@path` in the prose (`@docs/style.md`, `@~/.config/mini-agent/rules.md`, `@/abs/path.md`), never
inside a code span or a fenced or indented code block. A relative path is taken from the importing file's
directory. Imports nest up to MAX_HOPS deep; each file is included once (cycles end there). A file may import only
from where it lives: a project's file from the project, the user's own files from the user directory and the
project. Whatever resolves (symlinks followed) outside those roots, a likely secret or credential place, a
repository's internals, anything but a regular file, or a file over MAX_FILE_BYTES is refused with a note, never
silently dropped. Reads never follow a symlink swapped in after the check and never wait on a FIFO.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from mini_agent.context.enrich.mentions import find_mentions
from mini_agent.safety.workspace import secret_reason, within

MAX_HOPS = 5
"""Claude Code's limit: the instruction file is hop 0, what it imports hop 1, ... hop 5 at most."""
MAX_FILES = 64
"""Files in one instruction text at most: also bounds how deep placing them recurses."""
MAX_FILE_BYTES = 1024 * 1024
"""A bigger file is refused outright rather than read in part: an instruction file is never that big."""
READ_LIMIT = 64 * 1024
"""Bytes read of one file; the 32 KiB budget of all instruction text (sources.py) cuts further."""


def digest(data: bytes) -> str:
    """What identifies a file's content (instruction_trust.py remembers the agent's writes by it)."""
    return hashlib.sha256(data).hexdigest()[:32]


@dataclass(frozen=True)
class Loaded:
    """One file of the instruction text: a top-level instruction file (hop 0) or an import."""

    path: Path
    """As found or typed, made absolute (symlinks kept), so the human recognises it."""
    real: Path
    text: str
    """Decoded (invalid UTF-8 replaced), at most READ_LIMIT bytes of it, cut at a line end."""
    hop: int
    """The fewest imports between an instruction file and this one (0: it is one)."""
    imported_by: Path | None
    changed: bool
    """Written or changed since the session started (its ctime): by a tool call, a command or anyone."""
    left_out: int = 0
    """Bytes not read because of READ_LIMIT."""
    digest: str = ""
    """The hash of the whole file (instruction_trust.py): what the agent wrote is recognised by it."""


@dataclass(frozen=True)
class Refused:
    typed: str
    importer: Path
    why: str
    top: bool = False
    """An instruction file itself, not an import in one."""
    target: Path | None = None
    """The real path it resolved to, when it did (a missing file the agent may create next is watched too)."""

    def note(self) -> str:
        if self.top:
            return f"[not shown: {self.importer}: {self.why}]"
        return f"[@{self.typed} in {self.importer} was not imported: {self.why}]"


@dataclass(frozen=True)
class Roots:
    """Where files may be imported from."""

    project: Path
    """The project's root (the repository root, else the working directory), resolved."""
    user: Path
    """The user's mini-agent config directory, resolved."""
    private: tuple[Path, ...] = ()
    """mini-agent's own data (sessions, trust), resolved: never a project file's to import, even when it lies
    inside the project (MINI_AGENT_HOME there, or a session started in the home directory)."""

    def allowed_for(self, real_importer: Path) -> tuple[Path, ...]:
        """A file in the user directory may import from it and the project; any other only from the project."""
        return (self.user, self.project) if within(real_importer, self.user) else (self.project,)

    def private_for(self, real_importer: Path) -> tuple[Path, ...]:
        return () if within(real_importer, self.user) else self.private


def import_targets(text: str) -> list[str]:
    """The `@paths` of a Markdown text outside code, as typed, each once, in order."""
    return list(_targets(text)) if "@" in text else []


@functools.lru_cache(maxsize=64)
def _targets(text: str) -> tuple[str, ...]:
    """Cached by the text: the files are read again around every command, and rarely change."""
    lines = text.split("\n")
    for token in _block_parser().parse(text):
        if token.type in ("fence", "code_block") and token.map:
            start, end = token.map
            lines[start:end] = [""] * (end - start)
    return tuple(find_mentions("\n".join(lines)))  # blanks code spans (backticks) itself


@functools.cache
def _block_parser():
    """CommonMark's block rules only (where fences and indented code are); spans are find_mentions' business."""
    from markdown_it import MarkdownIt  # imported by rich already; only here, so the sources stay cheap to import

    return MarkdownIt("commonmark").disable("inline")


def expand(tops: Iterable[Path], roots: Roots, session_started: float) -> tuple[list[Loaded], list[Refused]]:
    """The top-level files, each followed by what it imports (depth first, in order), each real file once; and
    every import refused. A top-level file is checked like an import of the directory it sits in.

    The hop limit counts the fewest imports from any instruction file (found breadth first before anything is
    placed), so a file reached first down a long chain still brings in what a short chain reaches."""
    reads: dict[Path, Loaded | str] = {}
    hops: dict[Path, int] = {}
    refused: list[Refused] = []
    starts: list[tuple[Path, Path]] = []
    for top in tops:
        real = Path(os.path.realpath(top))
        if real in hops:
            continue  # a symlink to a file already shown
        home = roots.user if within(Path(os.path.realpath(top.parent)), roots.user) else roots.project
        why = _refusal(real, (home,))  # a symlink out of where it was found is refused like such an import
        if why is not None:
            refused.append(Refused(str(top), top, why, top=True))
            continue
        starts.append((top, real))
        hops[real] = 0
    queue = deque(starts)
    while queue:
        path, real = queue.popleft()
        read = reads[real] = _read(path, real, session_started)
        if isinstance(read, str) or hops[real] == MAX_HOPS:
            continue
        for typed in import_targets(read.text)[:MAX_FILES]:
            target, why = _resolve(typed, real, roots)
            if why is None and target is not None and target[1] not in hops and len(hops) < MAX_FILES:
                hops[target[1]] = hops[real] + 1
                queue.append(target)

    loaded: list[Loaded] = []
    placed: set[Path] = set()

    def place(typed: str, path: Path, real: Path, importer: Path | None) -> None:
        placed.add(real)
        read = reads[real]
        if isinstance(read, str):
            refused.append(Refused(typed, importer or path, read, top=importer is None, target=real))
            return
        loaded.append(replace(read, path=Path(os.path.abspath(path)), hop=hops[real], imported_by=importer))
        targets = import_targets(read.text)
        if len(targets) > MAX_FILES:
            why = f"{path} names {len(targets)} paths; only the first {MAX_FILES} were looked at"
            refused.append(Refused(targets[MAX_FILES], path, why))
        for typed in targets[:MAX_FILES]:
            target, why = _resolve(typed, real, roots)
            if why is None and target is not None and target[1] in placed:
                continue  # already included: once is enough, and a cycle ends here
            if why is None and target is not None and target[1] not in reads:
                too_many = len(hops) >= MAX_FILES and target[1] not in hops
                why = f"more than {MAX_FILES} files imported" if too_many else f"more than {MAX_HOPS} hops of imports"
            if why is not None or target is None:
                refused.append(Refused(typed, path, why or "not usable"))
                continue
            place(typed, target[0], target[1], path)

    for top, real in starts:
        if real not in placed:  # not already imported by an earlier file
            place(str(top), top, real, None)
    return loaded, refused


def _resolve(typed: str, importer_real: Path, roots: Roots) -> tuple[tuple[Path, Path] | None, str | None]:
    """(the path as written made absolute, its real path), or why it is refused."""
    try:
        candidate = Path(os.path.expanduser(typed))
    except (RuntimeError, ValueError) as exc:
        return None, f"not a usable path ({exc})"
    if not candidate.is_absolute():
        candidate = importer_real.parent / candidate
    path = Path(os.path.normpath(candidate))
    try:
        real = Path(os.path.realpath(path))
    except (OSError, ValueError) as exc:
        return None, f"not a usable path ({exc})"
    why = _refusal(real, roots.allowed_for(importer_real), roots.private_for(importer_real))
    return ((path, real), None) if why is None else (None, why)


def _refusal(real: Path, allowed: tuple[Path, ...], private: tuple[Path, ...] = ()) -> str | None:
    if not any(within(real, root) for root in allowed):
        where = " or ".join(str(root) for root in allowed)
        return f"it resolves to {real}, outside {where}"
    if any(within(real, place) for place in private):
        return "it is mini-agent's own data (sessions, the prompt history, trust decisions)"
    secret = secret_reason(real)
    if secret:
        return f"{secret}; an instruction file never pulls a secret into the context"
    if ".git" in real.parts:
        return "it is inside a .git directory (the repository's internals)"
    return None


def _read(path: Path, real: Path, started: float) -> Loaded | str:
    """The file's text, or why it was not read."""
    from mini_agent.files.exact import open_exact

    try:
        # No symlink followed (one swapped in since the check fails the open); O_NONBLOCK: a FIFO never waits.
        fd = open_exact(real, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return "it is a directory, not a file"
        if not stat.S_ISREG(info.st_mode):
            return "it is not a regular file (a pipe, socket or device), so it was not read"
        if info.st_size > MAX_FILE_BYTES:
            return f"it is {info.st_size:,} bytes, over the {MAX_FILE_BYTES // 1024} KiB an instruction file may have"
        data = os.read(fd, MAX_FILE_BYTES + 1)  # all of it, for the hash
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    if b"\0" in data[:8192]:
        return "it is a binary file (it contains NUL bytes)"
    kept = data[:READ_LIMIT]
    if len(data) > READ_LIMIT:
        kept = kept[: kept.rfind(b"\n") + 1]
    text = kept.decode("utf-8-sig", errors="replace")
    left_out = max(0, len(data) - len(kept))
    return Loaded(Path(os.path.abspath(path)), real, text, 0, None, info.st_ctime >= started, left_out, digest(data))
