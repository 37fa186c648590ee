"""write_file: create a file or replace all of it, atomically, keeping an existing file's conventions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from mini_agent.files.exact import open_exact
from mini_agent.tools._arguments import PathText
from mini_agent.tools.base import ToolContext, ToolError, tool
from mini_agent.tools.file_view import ensure_parent_directory, os_error_message, parent_problem, require_regular_file
from mini_agent.tools.textfile import SAMPLE_BYTES, UTF8, count_lines, dominant_newline, sniff_encoding, write_atomic

GUIDANCE = """
Use it to create new files or to rewrite a file completely; for a change to part of a file, edit_file is shorter
and safer. To overwrite an existing file you must have read it with read_file in this session (and it must not
have changed since), so you never destroy content you have not seen. Missing parent folders are created. Give the
whole content, never a placeholder like "rest unchanged". An overwritten file keeps its permissions, encoding and
line-ending style.
"""


def _check(ctx: ToolContext, path: str, content: str) -> None:
    """What write_file refuses before writing, checked without writing."""
    target = ctx.resolve(path)
    if _existing_file(target):
        ctx.require_fresh(target)
    else:
        parent_problem(target)


@tool(risk="write", guidance=GUIDANCE, precheck=_check, alias="Write", key_argument="path", edits_files=True)
def write_file(ctx: ToolContext, path: PathText, content: str) -> str:
    """Write a file with the given content, replacing everything in it.

    Creates the file, and any missing parent folders, if it does not exist. An existing file can only be
    overwritten after it has been read with read_file in this session and if it has not changed since; it keeps
    its permissions, encoding and line-ending style (CRLF stays CRLF). New files are written as UTF-8. To change
    part of a file, prefer edit_file.

    Args:
        path: The file to write, absolute or relative to the working directory.
        content: The complete new content of the file.
    """
    target, real = ctx.resolve(path), ctx.checked(path)
    exists = _existing_file(target)
    if exists:
        ctx.require_fresh(target)
        data, note = _encode_like(target, real, content)
    else:
        ensure_parent_directory(real)
        data, note = content.encode("utf-8"), ""
    try:
        write_atomic(real, data, ctx.data_dir)
    except OSError as exc:
        raise ToolError(os_error_message(exc, target, "write")) from None
    ctx.remember(target, data)
    lines = count_lines(content)
    verb = "Overwrote" if exists else "Created"
    return f"{verb} {target} ({lines} line{'s' if lines != 1 else ''}, {len(data):,} bytes{note})."


def _existing_file(path: Path) -> bool:
    """Whether a regular file is there to overwrite; ToolError for a directory or special file in the way."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False  # ensure_parent_directory explains a file standing where a folder should be
    except OSError as exc:
        raise ToolError(os_error_message(exc, path, "write")) from None
    if not stat.S_ISREG(mode):
        require_regular_file(path, "written")  # raises with the reason
    return True


def _encode_like(path: Path, real: Path, content: str) -> tuple[bytes, str]:
    """The content in the existing file's encoding and line endings (the file at `real`, the resolved `path`);
    a note when that is not UTF-8 with LF."""
    try:
        with os.fdopen(open_exact(real, os.O_RDONLY | os.O_NONBLOCK), "rb") as stream:
            sample = stream.read(SAMPLE_BYTES)
    except OSError as exc:
        raise ToolError(os_error_message(exc, path, "read")) from None
    encoding = sniff_encoding(sample, complete=len(sample) < SAMPLE_BYTES) or UTF8
    notes = []
    if "\r\n" not in content and dominant_newline(sample.decode(encoding.codec, errors="replace")) == "\r\n":
        content = content.replace("\n", "\r\n")
        notes.append("CRLF line endings kept")
    try:
        data = encoding.encode(content)
        if encoding != UTF8:
            notes.append(f"encoding {encoding.label} kept")
    except UnicodeEncodeError as exc:
        data = content.encode("utf-8")
        notes.append(f"written as UTF-8 because {encoding.label} cannot encode {exc.object[exc.start : exc.end]!r}")
    return data, "".join(f"; {note}" for note in notes)
