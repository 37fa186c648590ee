"""Hooks: the user's shell commands run on the agent's events (the session's start and end, a prompt, a tool call
before and after, a permission question, a notification, a stop, a compaction: `EVENTS`) with a JSON description
of the event on stdin, in the shape hooks written for Claude Code expect. Owns their definitions (`[[hooks.<Event>]]`
in config.toml; a project's `.claude/settings.json`), running one (time-limited, its own process group), and what
its exit status and output mean (exit 2 blocks where the event can be stopped; stdout may add context).

May import: errors, events, xmltext (hints), threads (a hook's signals), trust, processes (its run's process
group), tools (the Tool whose name and alias a matcher selects), safety (where a project's `.claude/` is). Never
the agent, tool_calls, ui/ or cli: the agent holds a `Hooks` and calls it at each event."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mini_agent.hooks.definitions import EVENTS, HookDef, ProjectHooks, configured
    from mini_agent.hooks.dispatch import NO_HOOKS, Hooks, PermissionAnswer, PromptBlocked, ToolVerdict

__all__ = [
    "EVENTS",
    "NO_HOOKS",
    "HookDef",
    "Hooks",
    "PermissionAnswer",
    "ProjectHooks",
    "PromptBlocked",
    "ToolVerdict",
    "configured",
]
_HOMES = {name: "definitions" for name in ("EVENTS", "HookDef", "ProjectHooks", "configured")} | {
    name: "dispatch" for name in ("NO_HOOKS", "Hooks", "PermissionAnswer", "PromptBlocked", "ToolVerdict")
}


def __getattr__(name: str) -> object:
    """Loaded on first use: the config reads a project's `.claude/` hooks (claude_settings.py) at start-up, and a
    run without hooks has no use for the dispatcher (its processes, its events) before the prompt."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
