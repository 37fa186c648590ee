"""Hooks: the user's shell commands run on the agent's events (PreToolUse, PostToolUse, UserPromptSubmit, Stop,
PreCompact) with a JSON description of the event on stdin, in the shape hooks written for other agents expect.
Owns their definitions (`[[hooks.<Event>]]` in config.toml), running one (time-limited, its own process group),
and what its exit status and output mean (exit 2 blocks; stdout may add context).

May import: errors, events, xmltext (hints), trust, processes (its run's process group), tools (the Tool whose
name and alias a matcher selects). Never the agent, tool_calls, ui/ or cli: the agent holds a `Hooks` and calls
it at each event."""

from mini_agent.hooks.definitions import EVENTS, HookDef, ProjectHooks, configured
from mini_agent.hooks.dispatch import NO_HOOKS, Hooks, PromptBlocked, ToolVerdict

__all__ = ["EVENTS", "NO_HOOKS", "HookDef", "Hooks", "ProjectHooks", "PromptBlocked", "ToolVerdict", "configured"]
