"""read_file: a page of a text file with line numbers, streamed so a huge file costs only the lines shown; an
image (recognised by its content) as an image block the model can see."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import Annotated, BinaryIO

from pydantic import Field

from mini_agent.files.exact import open_exact, regular
from mini_agent.safety.workspace import secret_reason
from mini_agent.tools._arguments import PathText
from mini_agent.tools.base import ToolContext, ToolError, ToolResult, tool
from mini_agent.tools.file_view import (
    MAX_LINE_CHARS,
    binary_file_message,
    numbered,
    os_error_message,
    require_regular_file,
)
from mini_agent.tools.textfile import SAMPLE_BYTES, Encoding, sniff_encoding
from mini_agent.xmltext import system_hint

MAX_LIMIT = 2000
MAX_OUTPUT_CHARS = 100_000
"""A page stops early past this many characters, so long lines cannot flood the context."""
COUNT_TOTAL_MAX_BYTES = 4 * 1024 * 1024
"""Files up to this size get their line total counted (a fast byte scan); bigger ones only when EOF is reached."""
_CHUNK = 1024 * 1024

GUIDANCE = """
Read a file before you edit or overwrite it: write_file and edit_file refuse files you have not read in this
session, or that changed since. Output is numbered like `cat -n`; the number and tab are not part of the file,
so leave them out of edit_file's old_string. It shows up to 2000 lines; for big files, read the part you need with
offset and limit (a search with bash `grep -n` tells you where to look), and continue from the offset the
truncation hint gives. Lines over 2000 characters are cut. It reads text in any common encoding; PNG, JPEG, GIF,
WebP, BMP and TIFF images come back as images you can see (scaled down when large). It refuses other binary files
and directories (use bash `ls` for those).
"""


def _check(ctx: ToolContext, path: str, offset: int = 1, limit: int = MAX_LIMIT) -> None:
    require_regular_file(ctx.resolve(path))


@tool(risk="read", guidance=GUIDANCE, precheck=_check, alias="Read", key_argument="path")
def read_file(
    ctx: ToolContext,
    path: PathText,
    offset: Annotated[int, Field(ge=1)] = 1,
    limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = MAX_LIMIT,
) -> str | ToolResult:
    """Read a text file, with line numbers, or look at an image.

    Returns up to `limit` lines starting at line `offset`, each as `<line number><tab><text>` like `cat -n`.
    Lines longer than 2000 characters are cut. When more of the file remains, the output ends with a hint
    giving the offset to continue from. The encoding (UTF-8, UTF-16, Latin-1, GBK, ...) is detected. An image
    (PNG, JPEG, GIF, WebP; BMP and TIFF are converted) is returned as an image, scaled down when large; offset and
    limit do not apply to it. Other binary files and directories are refused with an explanation.

    Args:
        path: The file to read, absolute or relative to the working directory.
        offset: The line number to start from (the first line is 1).
        limit: The maximum number of lines to return (at most 2000).
    """
    target = ctx.resolve(path)
    require_regular_file(target)
    data = None
    try:
        fd = open_exact(ctx.checked(path), os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as raw:
            info = regular(fd)
            image = _look_at_image(target, raw)
            if image is not None:
                ctx.remember(target)
                return image
            source: BinaryIO = raw
            if info.st_size <= COUNT_TOTAL_MAX_BYTES:  # read once: paged from memory, and hashed for the stamp
                data = raw.read()
                source = io.BufferedReader(io.BytesIO(data))  # the line reader peeks
            page = _read_page(target, source, info.st_size, offset, limit)
    except OSError as exc:
        raise ToolError(os_error_message(exc, target, "read")) from None
    ctx.remember(target, data)
    if ctx.secrets is not None and secret_reason(ctx.checked(path)):
        ctx.secrets.harvest(target, str(path))  # before the page goes out: the agent masks what it knows
    return page


def _look_at_image(path: Path, raw: BinaryIO) -> ToolResult | None:
    """The file as an image block when its first bytes say it is an image; None to read it as text."""
    from mini_agent.tools import image_file

    head = raw.read(18)
    raw.seek(0)
    other = image_file.other_image_format(head)
    if other is not None:
        raise ToolError(
            f"{path} is a {other} image, a format read_file cannot show: it shows PNG, JPEG, GIF and WebP (BMP and "
            "TIFF converted). Convert it to PNG or JPEG with an image tool if you need to see it."
        )
    if image_file.sniff(head) is None:
        return None
    try:
        image = image_file.load(image_file.read_image(raw))
    except image_file.NotAnImage:
        raw.seek(0)  # the first bytes looked like an image, Pillow says otherwise: whatever it is, as usual
        return None
    except image_file.ImageError as exc:
        raise ToolError(f"Cannot show the image {path}: {exc}.") from None
    return ToolResult(f"{path}: {image.describe()}.", blocks=(image.block(),))


def _read_page(path: Path, raw: BinaryIO, size: int, offset: int, limit: int) -> str:
    sample = raw.read(SAMPLE_BYTES)
    encoding = sniff_encoding(sample, complete=len(sample) < SAMPLE_BYTES)
    if encoding is None:
        raise ToolError(binary_file_message(path, size))
    if len(sample) <= len(encoding.bom):
        return system_hint("empty", f"{path} is empty (0 lines).")
    total = _count_lines(raw, encoding) if size <= COUNT_TOTAL_MAX_BYTES else None
    reader = _LineReader(raw, encoding)
    passed = reader.skip(offset - 1)
    lines, more, cut_short = _take_lines(reader, limit) if passed == offset - 1 else ([], False, False)
    if not lines:
        raise ToolError(_past_end(path, offset, passed))
    last = offset + len(lines) - 1
    if total is not None:
        more = last < total  # exact even when the last line shown was cut and not followed to its end
    body = numbered(lines, offset)
    if more:
        body += "\n" + _truncation_hint(offset, last, total, cut_short)
    if any(len(line) > MAX_LINE_CHARS for line in lines):
        body += "\n" + system_hint(
            "truncated",
            f"Lines longer than {MAX_LINE_CHARS} characters were cut. To see one whole, use bash, e.g. "
            f"`sed -n 'Np' {path.name} | cut -c 2001-6000` for line N.",
        )
    return body


def _take_lines(reader: _LineReader, limit: int) -> tuple[list[str], bool, bool]:
    """Up to `limit` lines (within the output budget); whether the file goes on; whether the budget ended it."""
    lines: list[str] = []
    used = 0
    rest_of_line_unread = False
    while len(lines) < limit and used < MAX_OUTPUT_CHARS:
        if rest_of_line_unread:
            reader.skip(1)
        read = reader.next_line()
        if read is None:
            return lines, False, False
        line, rest_of_line_unread = read
        lines.append(line)
        used += min(len(line), MAX_LINE_CHARS) + 8
    # A cut last line is not followed to its end: that could mean scanning gigabytes of one line.
    more = rest_of_line_unread or not reader.at_end()
    return lines, more, more and len(lines) < limit


def _count_lines(raw: BinaryIO, encoding: Encoding) -> int:
    counter = _LineReader(raw, encoding)
    try:
        return counter.skip(sys.maxsize)
    finally:
        counter.release()


class _LineReader:
    """A file's lines from just after its BOM, each read only as far as it can be shown.

    Lines end at LF only (a CR before it is dropped), as edit_file numbers them. Where a 0x0A byte is always a
    line break (UTF-8 and the legacy encodings) lines are found on raw bytes, which is fast and lets a huge
    line be skipped at memory speed; UTF-16/32 go through a text decoder.
    """

    def __init__(self, raw: BinaryIO, encoding: Encoding) -> None:
        raw.seek(len(encoding.bom))
        self._raw = raw
        self._codec = encoding.codec
        self._text = None
        if not encoding.ascii_newlines:
            self._text = io.TextIOWrapper(raw, encoding=encoding.codec, errors="replace", newline="\n")

    def skip(self, count: int) -> int:
        """Move past `count` lines; how many there were (fewer means EOF; a final unended line counts)."""
        if self._text is None:
            return _skip_lines_in_bytes(self._raw, count)
        passed = 0
        in_line = False
        while passed < count and (piece := self._text.readline(_CHUNK)):
            in_line = not piece.endswith("\n")
            passed += not in_line
        return passed + (passed < count and in_line)

    def next_line(self) -> tuple[str, bool] | None:
        """The next line without its ending, and whether more of it is unread (it is over-long); None at EOF."""
        if self._text is None:
            # Four bytes per character at most, so this many bytes always hold MAX_LINE_CHARS + 2 characters.
            piece = self._raw.readline(4 * (MAX_LINE_CHARS + 2)).decode(self._codec, errors="replace")
        else:
            piece = self._text.readline(MAX_LINE_CHARS + 2)
        if not piece:
            return None
        if piece.endswith("\n"):
            return piece[:-2] if piece.endswith("\r\n") else piece[:-1], False
        # No newline: the piece ended at EOF, or at the limit in the middle of an over-long line.
        if self._text is None:
            return piece, not self.at_end()
        return piece, len(piece) > MAX_LINE_CHARS + 1

    def at_end(self) -> bool:
        if self._text is None:
            return not self._raw.peek(1)  # type: ignore[attr-defined]
        return self._text.read(1) == ""

    def release(self) -> None:
        """Let go of the file without closing it, so it can be read again from the start."""
        if self._text is not None:
            self._text.detach()


def _skip_lines_in_bytes(raw: BinaryIO, count: int) -> int:
    """Move past `count` lines by counting newline bytes in raw chunks: memory speed, so far offsets answer fast."""
    passed = 0
    in_line = False
    while passed < count and (chunk := raw.read(_CHUNK)):
        newlines = chunk.count(b"\n")
        if passed + newlines >= count:
            position = -1
            for _ in range(count - passed):
                position = chunk.index(b"\n", position + 1)
            raw.seek(position + 1 - len(chunk), io.SEEK_CUR)
            return count
        passed += newlines
        in_line = not chunk.endswith(b"\n")
    return passed + in_line


def _past_end(path: Path, offset: int, total: int) -> str:
    return (
        f"offset {offset} is past the end of {path}, which has {total} line{'s' if total != 1 else ''}. "
        f"Use an offset from 1 to {max(total, 1)}."
    )


def _truncation_hint(first: int, last: int, total: int | None, cut_short: bool) -> str:
    shown = f"line {first}" if first == last else f"lines {first}-{last}"
    of_total = f" of {total}" if total is not None else ""
    why = f" (output limit of {MAX_OUTPUT_CHARS:,} characters reached)" if cut_short else ""
    attrs = {"lines": f"{first}-{last}", "next_offset": str(last + 1)}
    if total is not None:
        attrs["total_lines"] = str(total)
    return system_hint(
        "truncated",
        f"Showing {shown}{of_total}{why}. The file continues: call read_file with offset={last + 1} to read more.",
        **attrs,
    )
