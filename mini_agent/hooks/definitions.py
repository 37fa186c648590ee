"""Hook definitions: `[[hooks.<Event>]]` tables of the user's and the project's config.toml.

    [[hooks.PreToolUse]]
    matcher = "bash"                 # a tool name or a regular expression over it; absent or "*": every tool
    command = "~/.config/mini-agent/guard.sh"
    timeout = 30                     # seconds, default 60

A matcher also matches a tool's alias, the name other agents give it (`Bash`, `Read`, `Write`, `Edit`,
`WebFetch`, `Task`: declared on the tool, tools/base.py), so a hook written for them selects the same calls
here. Other events match what Claude Code matches them against (`SUBJECTS`): SessionStart its source, SessionEnd
its reason, Notification its type, PreCompact and PostCompact the trigger, SubagentStop the agent's type; the rest
run every hook.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from mini_agent.errors import ConfigError

EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Notification",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionStart",
    "SessionEnd",
)
SUBJECTS = {
    "PreToolUse": "the tool's name",
    "PostToolUse": "the tool's name",
    "PostToolUseFailure": "the tool's name",
    "PermissionRequest": "the tool's name",
    "Notification": "the notification type",
    "SubagentStop": "the agent's type",
    "PreCompact": "the trigger",
    "PostCompact": "the trigger",
    "SessionStart": "the source",
    "SessionEnd": "the reason",
}
"""What a matcher is matched against, per event; an event not here (UserPromptSubmit, Stop) runs every hook."""
DEFAULT_TIMEOUT = 60.0
KEYS = ("matcher", "command", "timeout")


@dataclass(frozen=True)
class HookDef:
    event: str
    command: str
    matcher: str | None
    timeout: float
    origin: str
    """"user" or "project": a project's hooks run only once the human trusted them."""
    source: str
    """The config file that defines it."""

    def matches(self, subject: str | None, alias: str | None = None) -> bool:
        """Whether it runs for this subject (a tool's name or its alias, a source, a reason, a type: `SUBJECTS`);
        events without a subject run every hook."""
        if subject is None or self.matcher in (None, "", "*"):
            return True
        pattern = _compiled(self.matcher)
        return any(pattern.fullmatch(name) for name in (subject, alias) if name)

    def summary(self) -> str:
        selects = f" [{self.matcher}]" if self.matcher not in (None, "", "*") else ""
        return f"{self.event}{selects}: {self.command}"


@dataclass(frozen=True)
class ProjectHooks:
    """A project's hooks as one thing to trust: any change to any of them asks again."""

    hooks: tuple[HookDef, ...]
    source: str
    origin: str = "project"
    name: str = "[hooks]"

    def digest(self) -> str:
        import hashlib
        import json

        written = [[hook.event, hook.matcher, hook.command, hook.timeout] for hook in self.hooks]
        return hashlib.sha256(json.dumps(written).encode()).hexdigest()


def configured(user: dict, user_path: Path, project: dict, project_path: Path | None) -> tuple[HookDef, ...]:
    """Every hook in force: the user's first, then the project's (which still need trust), each in file order."""
    hooks = hooks_in(user, "user", user_path)
    if project_path is not None:
        hooks += hooks_in(project, "project", project_path)
    return hooks


def hooks_in(data: dict, origin: str, path: Path) -> tuple[HookDef, ...]:
    table = data.get("hooks", {})
    if not isinstance(table, dict):
        raise ConfigError(f"hooks in {path} must be tables: [[hooks.PreToolUse]] with a command.")
    found: list[HookDef] = []
    for event, entries in table.items():
        if event not in EVENTS:
            raise ConfigError(f"Unknown hook event {event!r} in {path}; the events are: {', '.join(EVENTS)}.")
        if not isinstance(entries, list):
            raise ConfigError(f"hooks.{event} in {path} must be written [[hooks.{event}]] (a list of tables).")
        found += [_hook(event, entry, origin, path) for entry in entries]
    return tuple(found)


def _hook(event: str, entry: object, origin: str, path: Path) -> HookDef:
    where = f"a [[hooks.{event}]] table in {path}"
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be a table with a command.")
    unknown = sorted(set(entry) - set(KEYS))
    if unknown:
        raise ConfigError(f"Unknown key {unknown[0]!r} in {where}; the keys are: {', '.join(KEYS)}.")
    command, matcher, timeout = entry.get("command"), entry.get("matcher"), entry.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(command, str) or not command.strip():
        raise ConfigError(f"{where} needs a command (a string).")
    if matcher is not None and not isinstance(matcher, str):
        raise ConfigError(f"The matcher in {where} must be a string, got {matcher!r}.")
    if matcher not in (None, "", "*"):
        try:
            _compiled(matcher)
        except re.error as exc:
            raise ConfigError(f"The matcher {matcher!r} in {where} is not a valid pattern: {exc}.") from None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigError(f"The timeout in {where} must be a number of seconds above 0, got {timeout!r}.")
    return HookDef(event, command, matcher, float(timeout), origin, str(path))


@lru_cache(maxsize=64)
def _compiled(matcher: str) -> re.Pattern[str]:
    return re.compile(matcher)
