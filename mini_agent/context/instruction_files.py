"""Where instruction files are: the user's global AGENTS.md, then AGENTS.md, CLAUDE.md and CLAUDE.local.md in each
directory from the repository's root down to the working directory. What they say is instruction_text.py's."""

from __future__ import annotations

import os
from pathlib import Path

INSTRUCTIONS_CAP = 32 * 1024
"""Bytes of instruction-file content per turn, all files together (Codex's project_doc_max_bytes)."""
INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md")
"""Per directory, each that exists, in this order (one that is the same file as another, or only imports it, is
shown once); CLAUDE.local.md is the user's personal file beside the shared ones, so it comes last and wins."""
USER_INSTRUCTIONS = "AGENTS.md"


def repository_root(cwd: Path) -> Path | None:
    """The nearest directory from `cwd` upwards holding a `.git` (a directory, or a file in worktrees)."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return None


def instruction_files(cwd: Path, user_dir: Path) -> list[Path]:
    """The instruction files in the order they are shown: the user's global one, then root down to `cwd`."""
    cwd = Path(os.path.abspath(cwd))  # lexical, so paths read as the user knows them (no symlink resolution)
    root = repository_root(cwd) or cwd
    directories = [cwd, *cwd.parents[: len(cwd.parents) - len(root.parents)]][::-1]
    found: list[Path] = []
    user_file = Path(os.path.abspath(user_dir)) / USER_INSTRUCTIONS
    if user_file.is_file():
        found.append(user_file)
    for directory in directories:
        for name in INSTRUCTION_NAMES:
            candidate = directory / name
            if candidate.is_file() and candidate != user_file:  # a user dir in the project: shown as the user's
                found.append(candidate)
    return found
