"""edit_file: replace exact text in a file, changing no other byte (line endings, encoding, BOM, mode)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mini_agent.files.exact import read_exact
from mini_agent.tools._arguments import PathText
from mini_agent.tools._edit_help import find_spans, line_of
from mini_agent.tools.base import ToolContext, ToolError, tool
from mini_agent.tools.file_view import (
    ensure_parent_directory,
    missing_path_message,
    numbered,
    os_error_message,
    parent_problem,
    require_regular_file,
)
from mini_agent.tools.textfile import Encoding, LfView, count_lines, decode_file, write_atomic

CONTEXT_LINES = 3
MAX_EDIT_BYTES = 64 * 1024 * 1024
"""Bigger files are refused: the file, its text and the edited copy are all in memory at once."""
MAX_SHOWN_LINES = 40
_SHOWN_MATCH_LINES = 10

GUIDANCE = """
The usual way to change code: read the file first, then replace one exact piece of it. Copy old_string from
read_file's output without the line-number prefix, keeping indentation exactly; include just enough surrounding
lines to make it unique (it must match exactly one place unless replace_all is true). Make several small edits
rather than one huge one, and prefer it to write_file for any change to part of a file. Write plain `\\n` line
breaks: the file's own line endings, encoding and permissions are kept. To create a new file, use write_file
(or edit_file with an empty old_string). If the call fails, the error shows the nearest matching text with line
numbers: copy from it, do not guess.
"""


@dataclass(frozen=True)
class _Edit:
    """An edit worked out in full but not yet written: what the run writes, and all the precheck needs."""

    target: Path
    before: str
    spans: list[tuple[int, int]]
    new: str
    data: bytes
    """The edited file's bytes, in its own encoding and line endings."""
    new_text: str


def _check(ctx: ToolContext, path: str, old_string: str, new_string: str, replace_all: bool = False) -> None:
    """Everything edit_file checks, nothing written: a doomed edit is refused before anyone is asked."""
    target = ctx.resolve(path)
    if _plan(ctx, target, ctx.checked(path), old_string, new_string, replace_all) is None:
        _creatable(target)


@tool(risk="write", guidance=GUIDANCE, precheck=_check, alias="Edit", key_argument="path", edits_files=True)
def edit_file(ctx: ToolContext, path: PathText, old_string: str, new_string: str, replace_all: bool = False) -> str:
    """Replace exact text in a file.

    old_string must match the file's text exactly, including indentation, and occur exactly once (add
    surrounding lines to make it unique), unless replace_all is true. The file must have been read with
    read_file in this session and not changed since. Its line endings (a CRLF file stays CRLF), encoding,
    byte-order mark and permissions are kept. With an empty old_string, creates a new file containing
    new_string (or fills an existing empty file). Returns the edited lines with their line numbers.

    Args:
        path: The file to edit, absolute or relative to the working directory.
        old_string: The exact text to replace, without read_file's line-number prefixes; empty to create a new file.
        new_string: The text to put in its place (must differ from old_string).
        replace_all: Replace every occurrence of old_string instead of requiring exactly one.
    """
    target, real = ctx.resolve(path), ctx.checked(path)
    edit = _plan(ctx, target, real, old_string, new_string, replace_all)
    if edit is None:
        return _create(ctx, target, real, new_string)
    try:
        write_atomic(real, edit.data, ctx.data_dir)
    except OSError as exc:
        raise ToolError(os_error_message(exc, target, "write")) from None
    ctx.remember(target, edit.data)
    return _report(target, edit.before, _lf(edit.new_text), edit.spans, edit.new)


def _plan(
    ctx: ToolContext, target: Path, real: Path, old_string: str, new_string: str, replace_all: bool
) -> _Edit | None:
    """The edit as it would be written (the file read at `real`, the resolved `target`), or None for a creation;
    ToolError when it cannot succeed."""
    if old_string == new_string:
        raise ToolError("old_string and new_string are identical, so the edit would change nothing.")
    if not old_string:
        return None
    if not os.path.lexists(target):
        raise ToolError(
            missing_path_message(target)
            + " To create a new file, use write_file (or edit_file with an empty old_string)."
        )
    size = require_regular_file(target, "edited").st_size
    if size > MAX_EDIT_BYTES:
        raise ToolError(
            f"{target} is {size:,} bytes; edit_file holds the whole file in memory, so it edits files up to "
            f"{MAX_EDIT_BYTES // 2**20} MB. Use bash for this one (e.g. `sed -i` on the lines you found with grep -n)."
        )
    data = _read_bytes(target, real)
    ctx.require_fresh(target, data)
    original, encoding = decode_file(target, data)
    view = LfView(original)
    old, new = _lf(old_string), _lf(new_string)
    if old == new:
        raise ToolError("old_string and new_string differ only in line endings, so the edit would change nothing.")
    spans = find_spans(view.text, old, replace_all)
    updated = view.replace(spans, new)
    return _Edit(target, view.text, spans, new, _encode(target, updated, encoding), updated)


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def _creatable(target: Path) -> bool:
    """Whether an empty old_string may create `target` (True) or fill it, being an empty file (False)."""
    if os.path.lexists(target):
        if require_regular_file(target, "edited").st_size:
            raise ToolError(
                f"{target} already exists and is not empty, so old_string cannot be empty. To change part of it, "
                "set old_string to the text to replace; to replace all of it, read it and use write_file."
            )
        return False
    parent_problem(target)
    return True


def _create(ctx: ToolContext, target: Path, real: Path, content: str) -> str:
    creating = _creatable(target)
    if creating:
        ensure_parent_directory(real)
    data = _encode(target, content, Encoding("utf-8"))
    try:
        write_atomic(real, data, ctx.data_dir)
    except OSError as exc:
        raise ToolError(os_error_message(exc, target, "write")) from None
    ctx.remember(target, data)
    verb = "Created" if creating else "Filled the empty file"
    lines = count_lines(content)
    return f"{verb} {target} ({lines} line{'s' if lines != 1 else ''})."


def _read_bytes(path: Path, real: Path) -> bytes:
    try:
        return read_exact(real)
    except OSError as exc:
        raise ToolError(os_error_message(exc, path, "read")) from None


def _encode(path: Path, text: str, encoding: Encoding) -> bytes:
    try:
        return encoding.encode(text)
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"{path} is encoded as {encoding.label}, which cannot represent {exc.object[exc.start : exc.end]!r} "
            "in new_string. Use characters that encoding has (or an escape the file's language allows)."
        ) from None


def _report(path: Path, before: str, after: str, spans: list[tuple[int, int]], new: str) -> str:
    """Say what changed and show the first edited region, numbered like read_file, with context around it."""
    first_line = line_of(before, spans[0][0])  # nothing changed above the first edit, so it keeps its number
    lines = after.split("\n")
    if after.endswith("\n"):
        lines.pop()  # the empty string after the final newline is not a line
    start = max(1, first_line - CONTEXT_LINES)
    last_edited = first_line + max(0, new.count("\n") - new.endswith("\n"))
    end = min(len(lines), last_edited + CONTEXT_LINES, start + MAX_SHOWN_LINES - 1)
    shown = numbered(lines[start - 1 : end], start)
    if len(spans) == 1:
        return f"Edited {path}: replaced 1 occurrence on line {first_line}.\n{shown}"
    where = ", ".join(str(line_of(before, span_start)) for span_start, _ in spans[:_SHOWN_MATCH_LINES])
    more = ", ..." if len(spans) > _SHOWN_MATCH_LINES else ""
    return (
        f"Edited {path}: replaced {len(spans)} occurrences (on lines {where}{more} before the edit); "
        f"the first:\n{shown}"
    )
