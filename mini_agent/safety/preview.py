"""What a write or an edit would change, as a unified diff, for the human who is asked to approve it."""

from __future__ import annotations

import difflib
import stat
from pathlib import Path

from mini_agent.safety.workspace import resolve_path

MAX_PREVIEW_LINES = 400
MAX_PREVIEW_BYTES = 8 * 1024 * 1024
"""Files bigger than this are not diffed: reading and diffing them would keep the human waiting for a question."""


def change_preview(arguments: dict, cwd: Path) -> str:
    """A unified diff of the change a call of a tool that edits files would make (the caller knows which tools
    do, from their declarations): `content` replaces the file at `path` (write_file), `old_string` and
    `new_string` edit it (edit_file)."""
    path = resolve_path(cwd, str(arguments.get("path", "")))  # the file the tool itself will change
    unreadable = _not_previewable(path)
    if unreadable:
        return unreadable
    before = _read(path)
    if "content" in arguments:
        after = str(arguments.get("content", ""))
    else:
        old, new = str(arguments.get("old_string", "")), str(arguments.get("new_string", ""))
        if not old:
            after = new
        elif old in before:
            after = before.replace(old, new) if arguments.get("replace_all") else before.replace(old, new, 1)
        else:
            return f"(old_string not found in {path}; the edit will fail)"
    lines = list(
        difflib.unified_diff(
            _lines(before),
            _lines(after),
            fromfile=f"a/{path.name}" if before else "/dev/null",
            tofile=f"b/{path.name}",
        )
    )
    if len(lines) > MAX_PREVIEW_LINES:
        lines = lines[:MAX_PREVIEW_LINES] + [f"... ({len(lines) - MAX_PREVIEW_LINES} more diff lines)\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines) or "(no change)"


def _lines(text: str) -> list[str]:
    """Lines split at line feeds only (str.splitlines also splits at CR, FF and others): a CR that would overwrite
    a line on a terminal stays inside the line it is in, where the approval question shows it."""
    parts = text.split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _not_previewable(path: Path) -> str | None:
    """Why the current content cannot be shown (a fifo would block the read, a huge file would stall), or None."""
    try:
        info = path.stat()
    except (OSError, ValueError):  # missing (a new file), or a path no file can have: the tool will say which
        return None
    if not stat.S_ISREG(info.st_mode):
        return f"({path} is not a regular file; the call will fail)"
    if info.st_size > MAX_PREVIEW_BYTES:
        return f"({path} is {info.st_size:,} bytes, too big to show a diff)"
    return None


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    except OSError:
        return ""
