"""The names that configure an agent inside a project: mini-agent's own directory, and Claude Code's files it
reads (`.mcp.json`'s servers; `.claude/`'s commands, agents, skills and settings). What is written there runs or
is obeyed later, outside any sandbox, so every part of the boundary guards the same list: the policy asks before
a write (workspace.py), the sandbox keeps them read-only (sandbox/confinement.py), and a change made during a
call is reported and waits for the human's trust (planted.py, trust.py)."""

from __future__ import annotations

AGENT_FILES: tuple[tuple[str, int], ...] = ((".mini-agent", 3), (".mcp.json", 0), (".claude", 4))
"""Each name, with how many directory levels below it a change is looked for (`.claude/skills/<name>/scripts/x`
is four)."""
AGENT_FILE_NAMES = tuple(name for name, _depth in AGENT_FILES)
