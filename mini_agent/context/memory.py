"""The user's memory file (`memory.md` in the user directory): notes kept across projects and sessions, shown to
the model as the `user_memory` block. `#note`, saying "remember ..." or `/memory add ...` appends a note."""

from __future__ import annotations

import os
import re
from pathlib import Path

from mini_agent.context.sources import MEMORY_FILE

_REMEMBER = re.compile(
    r"^\s*(?:remember(?:\s+that)?(?:\s*[:,]\s*|\s+)|记住[\s:：,，]*)(?P<note>\S.*)$", re.IGNORECASE | re.DOTALL
)


def memory_path(user_dir: Path) -> Path:
    return Path(os.path.abspath(user_dir)) / MEMORY_FILE


def note_from_prompt(text: str) -> str | None:
    """The note a prompt asks to remember, or None. Conservative: only a prompt that starts with "remember",
    "remember that" or "记住", and not a question ("remember when we ...?" is asked, not told)."""
    match = _REMEMBER.match(text)
    if match is None:
        return None
    note = " ".join(match.group("note").split())
    return None if note.endswith(("?", "？")) else note


def note_from_hash(text: str) -> str | None:
    """The note of a one-line `#note` / `# note` (Claude Code's shortcut), or None. Pasted Markdown (more than one
    line), an issue number (`#123 fails`) and a shebang (`#!`) are prompts, not notes."""
    if not text.startswith("#") or "\n" in text.strip() or text[1:2] in ("!", "#") or text[1:2].isdigit():
        return None
    note = " ".join(text[1:].split())
    return note or None


def add_note(user_dir: Path, note: str) -> Path:
    """Append `note` as a Markdown list item; the file (private to the user) is created when missing."""
    path = memory_path(user_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "ab") as file:
        needs_newline = file.tell() > 0 and _last_byte(path) != b"\n"
        file.write((("\n" if needs_newline else "") + f"- {' '.join(note.split())}\n").encode("utf-8"))
    return path


def notes(user_dir: Path) -> list[str]:
    """The file's non-empty lines, as the user memory block shows them."""
    try:
        text = memory_path(user_dir).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if line.strip()]


def _last_byte(path: Path) -> bytes:
    with open(path, "rb") as file:
        file.seek(-1, os.SEEK_END)
        return file.read(1)
