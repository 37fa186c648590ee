"""The context sources: what the agent tells the model about the project, the machine and the session each turn.

Each source turns a `TurnInput` into the text of one block (see context.py); `default_sources` lists them in
the order their blocks are sent. Everything here is stdlib and cheap to import.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mini_agent.context.blocks import P0, P1, P2, Skip, Source, TurnInput
from mini_agent.context.call_lines import FAILED
from mini_agent.context.git_state import git_state
from mini_agent.context.instruction_files import (  # noqa: F401  (the names tests and other modules use here)
    INSTRUCTION_NAMES,
    INSTRUCTIONS_CAP,
    USER_INSTRUCTIONS,
    instruction_files,
    repository_root,
)

MEMORY_CAP = 8 * 1024
RECENT_CALLS_SHOWN = 8
MEMORY_FILE = "memory.md"


# -- capped file reading -------------------------------------------------------------------------------------

_SNIFF_BYTES = 8192
"""At least this much is read even under a tiny cap, so a binary file is still recognised by its NUL bytes."""


@dataclass(frozen=True)
class Excerpt:
    text: str
    """The part shown, decoded as UTF-8 (invalid bytes replaced), trailing newlines removed."""
    shown_bytes: int
    left_out: int
    """Bytes of the file not shown because of the cap."""
    next_line: int
    """The line where the part not shown starts (1-based), for read_file's offset."""
    binary: bool = False


def read_capped(path: Path, limit: int) -> Excerpt:
    """The first `limit` bytes of `path` at most, ending on a whole line. Raises OSError when it cannot be read."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(max(limit + 1, _SNIFF_BYTES))
    if b"\0" in head:
        return Excerpt("", 0, 0, 1, binary=True)
    shown = head[:limit]
    if len(head) > limit:
        # A cut mid-line would hand the model half an instruction; a cut on "\n" also never splits a UTF-8 char.
        shown = shown[: shown.rfind(b"\n") + 1]
    left_out = max(size, len(head)) - len(shown)
    text = shown.decode("utf-8-sig", errors="replace").rstrip("\r\n")
    return Excerpt(text, len(shown), left_out, shown.count(b"\n") + 1)


def cut_note(path: Path, excerpt: Excerpt, cap: int) -> str:
    """The line that replaces what the cap left out."""
    return (
        f"[{excerpt.left_out} more bytes of {path} not shown (over the {cap // 1024} KiB cap); "
        f'read them with read_file path="{path}" offset={excerpt.next_line}]'
    )


def capped_text(path: Path, limit: int, cap: int) -> tuple[str, int]:
    """The shown part of `path` with its cut note if any, and the bytes it used; the note alone when unreadable."""
    try:
        excerpt = read_capped(path, limit)
    except OSError as exc:
        return f"[not shown: cannot read {path}: {exc.strerror or exc}]", 0
    if excerpt.binary:
        return f"[not shown: {path} is a binary file (it contains NUL bytes)]", 0
    parts = [excerpt.text] if excerpt.text else []
    if excerpt.left_out:
        parts.append(cut_note(path, excerpt, cap))
    return "\n".join(parts), excerpt.shown_bytes


# -- project instructions ------------------------------------------------------------------------------------


def project_instructions(inp: TurnInput) -> str:
    from mini_agent.context.instruction_text import instruction_text

    cwd = Path(os.path.abspath(inp.cwd))
    files = instruction_files(cwd, inp.user_dir)
    if not files:
        root = repository_root(cwd) or cwd
        raise Skip(f"no AGENTS.md, CLAUDE.md or CLAUDE.local.md between {root} and {cwd}, none in {inp.user_dir}")
    text = instruction_text(inp)
    if text is None:
        raise Skip(f"instruction files are empty: {', '.join(map(str, files))}")
    return text


# -- environment ------------------------------------------------------------------------------------------------


def environment(inp: TurnInput) -> str:
    now = inp.now if inp.now.tzinfo else inp.now.astimezone()
    return "\n".join(
        [
            f"Working directory: {os.path.abspath(inp.cwd)}",
            f"OS: {platform.system()} {_short_release(platform.release())}".rstrip(),
            f"User's shell: {os.path.basename(os.environ.get('SHELL', '')) or 'sh'}",
            f"Date: {now:%A} {now:%Y-%m-%d}",
            f"Time: {now:%H:%M} {_timezone(now)}",
        ]
    )


def _short_release(release: str) -> str:
    """'6.8.0-45-generic' -> '6.8': the kernel's major.minor is what matters, the build tag is noise."""
    match = re.match(r"\d+(\.\d+)?", release)
    return match.group(0) if match else release


def _timezone(now: datetime) -> str:
    offset = now.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    utc = f"UTC{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    names = [getattr(now.tzinfo, "key", None), now.tzname()]  # key: an IANA name such as Asia/Shanghai
    shown = [name for name in dict.fromkeys(names) if name and name != utc and name != "UTC"]
    return f"{', '.join(shown)} ({utc})" if shown else utc


# -- user memory, recent activity, stdin ------------------------------------------------------------------------


def user_memory(inp: TurnInput) -> str:
    path = Path(os.path.abspath(inp.user_dir)) / MEMORY_FILE
    if not path.is_file():
        raise Skip(f"no memory file at {path}")
    body, _ = capped_text(path, MEMORY_CAP, MEMORY_CAP)
    if not body.strip():
        raise Skip(f"the memory file {path} is empty")
    return f"The user's notes for you, kept across projects ({path}):\n{body}"


def recent_activity(inp: TurnInput) -> str:
    if not inp.recent_calls:
        raise Skip("no tool calls yet")
    shown = inp.recent_calls[-RECENT_CALLS_SHOWN:]
    lines = ["Recent tool calls, oldest first (local time, call, outcome, duration):", *(f"- {c}" for c in shown)]
    if any(FAILED in call for call in shown):
        lines.append(
            "Calls marked failed did not work: do not repeat one unchanged; read its error and change the approach "
            "or the input first."
        )
    return "\n".join(lines)


def stdin(inp: TurnInput) -> str:
    if not inp.stdin or not inp.stdin.strip():
        raise Skip("nothing piped on stdin")
    return inp.stdin


def default_sources() -> list[Source]:
    """In the order their blocks follow the user's text: piped input first, as it belongs to the message."""
    return [
        Source("stdin", P0, stdin, ttl=0, inline=True, escaped=True),
        # A command that could write may have rewritten an instruction or memory file (`echo >> AGENTS.md`, a
        # `git checkout`): re-read them on the next turn rather than serve what the TTL cached. A command the
        # sandbox kept read-only changed nothing (tool_calls.reach).
        Source(
            "project_instructions",
            P0,
            project_instructions,
            ttl=30,
            stale_after=frozenset({"exec", "exec-project", "write"}),  # "write": an import may have any name
            watched_names=frozenset(INSTRUCTION_NAMES),
        ),
        Source("environment", P1, environment, ttl=0, inline=True),
        Source("git_state", P1, git_state, ttl=10, stale_after=frozenset({"write", "exec", "exec-project"})),
        Source(
            "user_memory",
            P1,
            user_memory,
            ttl=60,
            stale_after=frozenset({"exec"}),  # not "exec-project": the memory file is outside the project
            watched_names=frozenset({MEMORY_FILE}),
        ),
        Source("recent_activity", P2, recent_activity, ttl=0, inline=True),
    ]
