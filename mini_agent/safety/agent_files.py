"""The names that configure an agent inside a project: mini-agent's own directory, and Claude Code's files it
reads (`.mcp.json`'s servers; `.claude/`'s commands, agents, skills and settings). What is written there runs or
is obeyed later, outside any sandbox, so every part of the boundary guards the same list: the policy asks before
a write (workspace.py), the sandbox keeps them read-only (sandbox/confinement.py), and a change made during a
call is reported and waits for the human's trust (planted.py, trust.py)."""

from __future__ import annotations

from pathlib import Path

from mini_agent.safety.workspace import project_dirs

AGENT_FILES: tuple[tuple[str, int], ...] = ((".mini-agent", 4), (".mcp.json", 0), (".claude", 4))
"""Each name, with how many directory levels below it a change is looked for (`.claude/skills/<name>/scripts/x`
is four, and so is `.mini-agent/skills/<name>/scripts/x`)."""
AGENT_FILE_NAMES = tuple(name for name, _depth in AGENT_FILES)


DEFINITION_PLACES = (".mini-agent", ".claude")
"""Where a project (and the user, in their home) keeps commands and skills: mini-agent's own directory first,
then Claude Code's, read for compatibility."""


def definition_dirs(cwd: Path, user_dir: Path, home: Path, kind: str) -> list[tuple[str, Path]]:
    """The directories of one kind of definition (`commands`, `skills`), highest precedence first, each with its
    scope: the project's (from the working directory up to the repository root, nearest first; mini-agent's before
    Claude Code's in each), then the user's (`<user dir>/<kind>`, then `~/.claude/<kind>`). The first to define a
    name wins."""
    projects = project_dirs(cwd, home)
    found = [("project", directory / place / kind) for directory in projects for place in DEFINITION_PLACES]
    found.append(("user", user_dir / kind))
    found.append(("user", home / ".claude" / kind))
    return found
