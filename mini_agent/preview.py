"""What a write or an edit would change, as a unified diff, for the human who is asked to approve it."""

from __future__ import annotations

import difflib
from pathlib import Path

MAX_PREVIEW_LINES = 400


def change_preview(tool_name: str, arguments: dict, cwd: Path) -> str | None:
    """A unified diff of the proposed change, or None when the tool changes no file."""
    if tool_name not in ("write_file", "edit_file"):
        return None
    path = Path(arguments.get("path", ""))
    path = path if path.is_absolute() else cwd / path
    before = _read(path)
    if tool_name == "write_file":
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
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{path.name}" if before else "/dev/null",
            tofile=f"b/{path.name}",
        )
    )
    if len(lines) > MAX_PREVIEW_LINES:
        lines = lines[:MAX_PREVIEW_LINES] + [f"... ({len(lines) - MAX_PREVIEW_LINES} more diff lines)\n"]
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines) or "(no change)"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    except OSError:
        return ""
