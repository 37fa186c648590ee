"""Hooks: the user's shell commands run on the agent's events (the session's start and end, a prompt, a tool call
before and after, a permission question, a notification, a stop, a compaction: `EVENTS`) with a JSON description
of the event on stdin, in the shape hooks written for Claude Code expect. Owns their definitions (`[[hooks.<Event>]]`
in config.toml; a project's `.claude/settings.json`), running one (time-limited, its own process group), and what
its exit status and output mean (exit 2 blocks where the event can be stopped; stdout may add context).

May import: errors, events, xmltext (hints), trust, processes (its run's process group), tools (the Tool whose
name and alias a matcher selects), safety (where a project's `.claude/` is). Never the agent, tool_calls, ui/ or
cli: the agent holds a `Hooks` and calls it at each event."""

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
