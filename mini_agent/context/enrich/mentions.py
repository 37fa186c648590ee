"""`@path` mentions: the files and folders the user pointed at, read for the model before it has to ask.

As in Claude Code and Aider: `@src/app.py`, `@./README.md`, `@~/notes.txt`, `@/abs/path`, `@"a b.txt"`. A file
comes with numbered lines (as read_file shows them), a folder as a listing. A missing path, a binary file or a
pipe is named as such, so the model knows what the user pointed at even when it cannot be shown. An image is
attached as an image by context/images.py, and left out here.
"""

from __future__ import annotations

import io
import os
import re
import stat
from itertools import islice
from pathlib import Path
from typing import BinaryIO

from mini_agent.context.blocks import P0, ContextBlock, Enricher, Skip, TurnInput
from mini_agent.xmltext import escape

MAX_MENTIONS = 10
"""Mentions read per message: every block is P0 (never dropped), so a pasted list of paths must not flood."""
MAX_LINES = 500
MAX_BYTES = 50 * 1024
MAX_ENTRIES = 200
MAX_SCANNED_ENTRIES = 10_000
"""A huge folder is listed from its first entries only: sorting millions of names is not worth the wait."""
COUNT_LINES_MAX_BYTES = 4 * 1024 * 1024
"""Files up to this size get their total line count (one bounded read); bigger ones say only their size."""
LONG_LINE_SKIP_CHARS = 1024 * 1024
"""How far past a cut line we follow it to reach the next line, so a one-line 3 GB file cannot stall us."""
JUNK = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "Thumbs.db"})
"""Never worth listing; hidden entries (.git, .venv, caches) are skipped as well."""

# Code in backticks is quoted text, not a request: `@decorator` or `user@host` there mentions nothing.
# An unclosed ``` fence runs to the end of the message, as in Markdown.
_CODE = re.compile(r"```.*?(?:```|\Z)|(`+).+?\1", re.DOTALL)
# A mention starts the text or follows a space, an opening bracket or quote (or CJK text, where no space is
# typed), so `user@example.com` is not one. Bare paths end at whitespace or full-width punctuation.
_MENTION = re.compile(
    r"""(?:^|(?<=[\s(\[{<"'\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]))@"""
    r"""(?:"(?P<double>[^"\n]+)"|'(?P<single>[^'\n]+)'|(?P<bare>[^\s"'`@，。；：！？、）】》」』]+))"""
)
_TRAILING = ",;:!?)]}'\""
RESOURCE_MENTION = re.compile(r"(?P<server>[A-Za-z0-9_-]+):(?P<uri>[A-Za-z][\w+.-]*://.+)")
"""`@server:protocol://path` mentions an MCP server's resource (Claude Code's form; mcp_mentions.py), not a path."""
_KINDS = (
    (stat.S_ISFIFO, "named pipe"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


def without_code(text: str) -> str:
    """The text with every backticked span blanked out (same length, so positions still line up)."""
    return _CODE.sub(lambda match: " " * len(match.group()), text)


def find_mentions(text: str) -> list[str]:
    """The paths mentioned with `@`, as typed (quotes and trailing punctuation removed), each once, in order."""
    found: list[str] = []
    for match in _MENTION.finditer(without_code(text)):
        quoted = match.group("double") or match.group("single")
        path = quoted if quoted is not None else _strip_trailing(match.group("bare"))
        if path:
            found.append(path)
    return list(dict.fromkeys(found))


def _strip_trailing(token: str) -> str:
    # A sentence's final `.` goes, but not the dots of a `.` or `..` path segment (`@../`, `@src/..`).
    while token:
        last_segment = token.rsplit("/", 1)[-1]
        if token[-1] in _TRAILING or (token[-1] == "." and set(last_segment) != {"."}):
            token = token[:-1]
        else:
            break
    return token


def enrich_mentions(inp: TurnInput) -> list[ContextBlock]:
    mentioned = [
        typed
        for typed in find_mentions(inp.text)
        if f"@{typed}" not in inp.attached and not RESOURCE_MENTION.fullmatch(typed)
    ]
    if not mentioned:
        raise Skip("no @mentions" if not inp.attached else "only images, attached as such")
    blocks = [ContextBlock(f"file:{typed}", P0, describe(typed, inp.cwd)) for typed in mentioned[:MAX_MENTIONS]]
    if len(mentioned) > MAX_MENTIONS:
        rest = ", ".join(f"@{escape(typed)}" for typed in mentioned[MAX_MENTIONS:])
        blocks.append(
            ContextBlock(
                "mentions_not_read",
                P0,
                f"Only the first {MAX_MENTIONS} @mentions were read. Not read (use read_file): {rest}",
            )
        )
    return blocks


mentions = Enricher("mentions", enrich_mentions, needs="@")


def describe(typed: str, cwd: Path) -> str:
    """What the model should know about one mentioned path: its contents, its listing, or why neither."""
    shown = f"@{escape(typed)}"
    try:
        target = resolve(typed, cwd)
    except ValueError as exc:  # `~name` with a character no user name can hold
        return f"{shown}: not a usable path ({escape(str(exc))})"
    try:
        info = os.stat(target)
    except (FileNotFoundError, NotADirectoryError):
        where = escape(str(target))
        if os.path.islink(target):
            return f"{shown}: a broken symbolic link (looked at {where}, which points to a missing path)"
        return f"{shown}: no such file or directory (looked at {where})"
    except PermissionError:
        return f"{shown}: permission denied (cannot look at {escape(str(target))})"
    except (OSError, ValueError) as exc:  # a name too long, an embedded NUL, an unencodable character
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return f"{shown}: not a usable path ({escape(reason)})"
    if stat.S_ISDIR(info.st_mode):
        return _listing(shown, target)
    if not stat.S_ISREG(info.st_mode):
        return _refused(shown, target, info.st_mode)
    return _contents(shown, target, info.st_size)


def resolve(typed: str, cwd: Path) -> Path:
    # The same resolution as the file tools, so the path shown here is the one read_file would open.
    candidate = Path(os.path.expanduser(typed))
    if not candidate.is_absolute():
        candidate = cwd / candidate
    return Path(os.path.normpath(candidate))


def _refused(shown: str, target: Path, mode: int) -> str:
    kind = next((name for is_kind, name in _KINDS if is_kind(mode)), "special file")
    return (
        f"{shown} is a {kind} ({escape(str(target))}), not a regular file: it was not opened, "
        "because reading it could block or never end."
    )


def _listing(shown: str, target: Path) -> str:
    where = escape(str(target))
    try:
        with os.scandir(target) as scan:
            entries = [(entry.name, entry.is_dir()) for entry in islice(scan, MAX_SCANNED_ENTRIES + 1)]
    except OSError as exc:
        return f"{shown} is a directory ({where}) that cannot be listed: {escape(exc.strerror or str(exc))}"
    partial = len(entries) > MAX_SCANNED_ENTRIES
    entries = entries[:MAX_SCANNED_ENTRIES]
    visible = sorted(name + "/" if is_dir else name for name, is_dir in entries if not _is_noise(name))
    skipped = len(entries) - len(visible)
    count = f"{len(visible)}{'+' if partial else ''} entr{'y' if len(visible) == 1 else 'ies'}"
    noise = f", {skipped} hidden or junk not shown" if skipped else ""
    lines = [f"{shown} is the directory {where} ({count}{noise}):"]
    lines += [escape(name) for name in visible[:MAX_ENTRIES]]
    if len(visible) > MAX_ENTRIES:
        lines.append(f"... and {len(visible) - MAX_ENTRIES}{'+' if partial else ''} more")
    if not visible:
        lines.append("(nothing to list)")
    return "\n".join(lines)


def _is_noise(name: str) -> bool:
    return name.startswith(".") or name in JUNK or name.endswith(".egg-info")


def _contents(shown: str, target: Path, size: int) -> str:
    where = escape(str(target))
    try:
        # O_NONBLOCK: if the path became a pipe since stat, opening must still not wait for a writer.
        descriptor = os.open(target, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return _unreadable(shown, where, size, exc)
    with open(descriptor, "rb") as raw:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            return _refused(shown, target, mode)
        try:
            return _numbered_contents(shown, target, raw, size)
        except OSError as exc:
            return _unreadable(shown, where, size, exc)


def _unreadable(shown: str, where: str, size: int, exc: OSError) -> str:
    why = "permission denied" if isinstance(exc, PermissionError) else escape(exc.strerror or str(exc))
    return f"{shown} ({where}, {size:,} bytes) cannot be read: {why}"


def _numbered_contents(shown: str, target: Path, raw: BinaryIO, size: int) -> str:
    from mini_agent.tools.file_view import numbered
    from mini_agent.tools.textfile import SAMPLE_BYTES, sniff_encoding
    from mini_agent.xmltext import system_hint

    where = escape(str(target))
    sample = raw.read(SAMPLE_BYTES)
    encoding = sniff_encoding(sample, complete=len(sample) < SAMPLE_BYTES)
    if encoding is None:
        return f"{shown} ({where}) is a binary file of {size:,} bytes; its contents are not shown."
    if len(sample) <= len(encoding.bom):
        return f"{shown} ({where}) is an empty file."
    total = _count_lines(raw) if encoding.ascii_newlines else None
    raw.seek(len(encoding.bom))
    text = io.TextIOWrapper(raw, encoding=encoding.codec, errors="replace", newline="\n")
    try:
        lines, more = _take_lines(text)
    finally:
        text.detach()  # the `with` in _contents owns the file
    extent = f"{total:,} line{'s' if total != 1 else ''}" if total is not None else f"{size:,} bytes"
    body = f"Contents of {shown} ({where}, {extent}), numbered like read_file:\n{escape(numbered(lines, 1))}"
    if more:
        last = len(lines)
        of_total = f" of {total:,}" if total is not None else ""
        body += "\n" + system_hint(
            "truncated",
            f"Showing lines 1-{last}{of_total}; the file continues. "
            f"Call read_file with path {target} and offset={last + 1} to read more.",
            lines=f"1-{last}",
            next_offset=str(last + 1),
        )
    return body


def _count_lines(raw: BinaryIO) -> int | None:
    raw.seek(0)
    data = raw.read(COUNT_LINES_MAX_BYTES + 1)
    if len(data) > COUNT_LINES_MAX_BYTES:
        return None
    return data.count(b"\n") + (not data.endswith(b"\n"))


def _take_lines(text: io.TextIOWrapper) -> tuple[list[str], bool]:
    """The first lines within MAX_LINES and MAX_BYTES, read one at a time; whether the file goes on."""
    from mini_agent.tools.file_view import MAX_LINE_CHARS, cut_line

    lines: list[str] = []
    used = 0
    while len(lines) < MAX_LINES:
        piece = text.readline(MAX_LINE_CHARS + 2)
        if not piece:
            return lines, False
        if piece.endswith("\n"):
            line = piece[:-1].removesuffix("\r")
        else:
            line = piece  # the last line without a newline, or the start of an over-long one
            if len(piece) == MAX_LINE_CHARS + 2 and not _skip_rest_of_line(text):
                lines.append(line)
                return lines, True
        used += len(cut_line(line).encode("utf-8", "replace")) + 8  # number column, tab, newline
        if used > MAX_BYTES:
            return lines, True
        lines.append(line)
    return lines, text.read(1) != ""


def _skip_rest_of_line(text: io.TextIOWrapper) -> bool:
    """Move past the rest of an over-long line; False if it goes on past what we are willing to scan."""
    skipped = 0
    while skipped < LONG_LINE_SKIP_CHARS:
        piece = text.readline(64 * 1024)
        if not piece or piece.endswith("\n"):
            return True
        skipped += len(piece)
    return False
