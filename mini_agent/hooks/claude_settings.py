"""Claude Code's hooks in a project's `.claude/settings.json` and `.claude/settings.local.json`, read as the
project's own hooks: they run only once trusted, together with those of its `.mini-agent/config.toml` (any
change to any of them asks again).

    {"hooks": {"PostToolUse": [{"matcher": "Edit|Write",
                                "hooks": [{"type": "command", "command": "npx prettier --write", "timeout": 30}]}]}}

The nearest directory from the working directory up to the repository root that has either file is the one read.
A hook of another type than "command" (prompt, http, agent), an event mini-agent has no counterpart for, and a
file that is not JSON are left out, each with a notice: Claude Code's file is not ours to refuse to start over.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from mini_agent.hooks.definitions import DEFAULT_TIMEOUT, EVENTS, HookDef
from mini_agent.safety.workspace import project_dirs

FILES = ("settings.json", "settings.local.json")


def claude_project_hooks(cwd: Path) -> tuple[tuple[HookDef, ...], list[str]]:
    """The hooks of the nearest `.claude/` settings files, and a notice for each thing left out."""
    for directory in project_dirs(cwd):
        paths = [directory / ".claude" / name for name in FILES]
        if any(path.is_file() for path in paths):
            hooks: list[HookDef] = []
            notices: list[str] = []
            for path in paths:
                found, left_out = hooks_in_file(path)
                hooks += found
                notices += left_out
            return tuple(hooks), notices
    return (), []


def hooks_in_file(path: Path) -> tuple[list[HookDef], list[str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [], []
    except (OSError, ValueError) as exc:
        return [], [f"Claude Code's {path} was not read ({exc}): its hooks do not run."]
    table = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(table, dict):
        return [], []
    hooks: list[HookDef] = []
    notices: list[str] = []
    for event, groups in table.items():
        if event not in EVENTS:
            notices.append(f"The {event} hooks in {path} do not run: mini-agent has no {event} event.")
            continue
        for group in groups if isinstance(groups, list) else [groups]:
            hooks += _group(event, group, path, notices)
    return hooks, notices


def _group(event: str, group: object, path: Path, notices: list[str]) -> list[HookDef]:
    where = f"a {event} entry in {path}"
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        notices.append(f"{where} is not {{\"matcher\": ..., \"hooks\": [...]}}: left out.")
        return []
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        notices.append(f"{where} has a matcher that is not a string: left out.")
        return []
    try:
        re.compile(matcher or "")
    except re.error as exc:
        notices.append(f"{where} has a matcher that is not a valid pattern ({exc}): left out.")
        return []
    found = []
    for entry in group["hooks"]:
        command = entry.get("command") if isinstance(entry, dict) else None
        kind = entry.get("type", "command") if isinstance(entry, dict) else None
        if kind != "command" or not isinstance(command, str) or not command.strip():
            notices.append(f"{where} has a hook that is not a command (type {kind!r}): left out.")
            continue
        timeout = entry.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            timeout = DEFAULT_TIMEOUT
        found.append(HookDef(event, command, matcher or None, float(timeout), "project", str(path)))
    return found
