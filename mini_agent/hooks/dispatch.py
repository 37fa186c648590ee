"""The session's hooks, called by the agent at each event: which hooks match, the JSON each gets on stdin, and
what their outcomes add up to (the first block wins; every context is kept, in order)."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from mini_agent.errors import ExitStatus, MiniAgentError
from mini_agent.events import Emit, HookRan, Notice
from mini_agent.hooks.definitions import EVENTS, HookDef
from mini_agent.hooks.outcome import Outcome, read_outcome
from mini_agent.hooks.runner import run_hook
from mini_agent.xmltext import system_hint

if TYPE_CHECKING:
    from mini_agent.tools.base import Tool, ToolResult

TOOL_EVENTS = ("PreToolUse", "PostToolUse")


class PromptBlocked(MiniAgentError):
    """A UserPromptSubmit hook stopped the prompt: nothing was sent, and the human is told why."""

    exit_status = ExitStatus.DENIED


@dataclass(frozen=True)
class ToolVerdict:
    blocked: str | None = None
    """The result the model gets instead of the call running; None: the call goes on."""
    context: str = ""
    """What the hooks added, to go after the call's result."""


class Hooks:
    def __init__(self, hooks: Sequence[HookDef], cwd: Path) -> None:
        self._hooks = {event: tuple(hook for hook in hooks if hook.event == event) for event in EVENTS}
        self.cwd = cwd
        self.emit: Emit = lambda event: None
        self.mode: Callable[[], str] = lambda: "default"
        self.transcript: Callable[[], tuple[str, str]] = lambda: ("", "")
        """The session's id and the path of its file, for the JSON every hook gets."""
        self.mask: Callable[[str], str] = lambda text: text
        """Known secrets out of what a hook printed before the model sees it."""
        self.environment: Callable[[], dict[str, str]] | None = None
        """The environment a hook inherits; None: ours, whole."""
        self._stop_active = False

    def __bool__(self) -> bool:
        return any(self._hooks.values())

    def serving(self, emit: Emit, mask: Callable[[str], str], mode: Callable[[], str]) -> Hooks:
        """These hooks bound to the agent they serve: they report through its events (masked, nested for a
        sub-agent), mask its secrets out of what they print, and tell its permission mode."""
        bound = copy.copy(self)
        bound.emit, bound.mask, bound.mode = emit, mask, mode
        return bound

    def for_tools(self) -> Hooks:
        """A sub-agent's hooks: the tool events only (its prompt is the parent's brief, its stop the task's end)."""
        narrowed = Hooks([hook for event in TOOL_EVENTS for hook in self._hooks[event]], self.cwd)
        narrowed.mode, narrowed.transcript, narrowed.mask = self.mode, self.transcript, self.mask
        narrowed.environment = self.environment
        return narrowed

    def before_tool(self, tool_use_id: str, tool: Tool, tool_input: dict) -> ToolVerdict:
        details = partial(self._tool_details, tool_use_id, tool, tool_input)
        outcome = self._run("PreToolUse", tool.name, details, tool.alias)
        if outcome.block is not None:
            return ToolVerdict(blocked=f"Blocked by a PreToolUse hook: {outcome.block}")
        return ToolVerdict(context=self._context("PreToolUse", outcome))

    def after_tool(self, tool_use_id: str, tool: Tool, tool_input: dict, result: ToolResult) -> str:
        """Text to add after the call's result: a block's reason (the call already ran) or added context."""

        def details() -> dict:
            response: dict = {"content": result.content, "is_error": result.is_error}
            if result.exit_code is not None:  # the call ran a command
                response["exit_code"] = result.exit_code
            return {**self._tool_details(tool_use_id, tool, tool_input), "tool_response": response}

        outcome = self._run("PostToolUse", tool.name, details, tool.alias)
        objection = f"A PostToolUse hook objected: {outcome.block}" if outcome.block is not None else ""
        said = "\n".join(part for part in (outcome.context, objection) if part)
        return system_hint("hook", said, event="PostToolUse") if said else ""

    def prompt_submitted(self, prompt: str) -> list[str]:
        """Context the hooks add to this turn; PromptBlocked when one stops the prompt."""
        self._stop_active = False
        outcome = self._run("UserPromptSubmit", None, lambda: {"prompt": prompt})
        if outcome.block is not None:
            raise PromptBlocked(f"A UserPromptSubmit hook stopped the prompt: {outcome.block}")
        context = self._context("UserPromptSubmit", outcome)
        return [context] if context else []

    def stopping(self, last_message: str) -> str | None:
        """The model is done: a Stop hook may send it back to work, with its reason as the next user message."""
        details = {"stop_hook_active": self._stop_active, "last_assistant_message": last_message}
        outcome = self._run("Stop", None, lambda: details)
        if outcome.block is None:
            return None
        self._stop_active = True
        return system_hint("hook", f"A Stop hook says the task is not done: {outcome.block}", event="Stop")

    def before_compaction(self, trigger: str, focus: str | None) -> tuple[str | None, str | None]:
        """(why not, or None to go on; the focus with what the hooks added). Only automatic ones can be blocked."""
        kind = "manual" if trigger == "manual" else "auto"
        outcome = self._run("PreCompact", kind, lambda: {"trigger": kind, "custom_instructions": focus or ""})
        if outcome.block is not None and kind == "auto":
            return f"a PreCompact hook blocked it: {outcome.block}", focus
        added = outcome.context
        return None, "\n".join(part for part in (focus, added) if part) or None

    def _run(self, event: str, subject: str | None, details: Callable[[], dict], alias: str | None = None) -> Outcome:
        """`details` builds the event's own fields, only when a hook matches: most calls of most sessions have none.
        `alias`: the tool's other name, which a matcher may use instead."""
        hooks = [hook for hook in self._hooks[event] if hook.matches(subject, alias)]
        if not hooks:
            return Outcome()
        session_id, transcript = self.transcript()
        payload = {
            "session_id": session_id,
            "transcript_path": transcript,
            "cwd": str(self.cwd),
            "permission_mode": self.mode(),
            "hook_event_name": event,
            **details(),
        }
        environment = self.environment() if self.environment else None
        block, contexts = None, []
        for hook in hooks:
            run = run_hook(hook, payload, self.cwd, environment)
            outcome = read_outcome(run)
            self.emit(HookRan(event, hook.summary(), subject, run.exit_code, run.seconds, outcome.label))
            if outcome.message:
                self.emit(Notice(outcome.message))
            if outcome.context:
                contexts.append(self.mask(outcome.context))
            if outcome.block is not None:
                block = self.mask(outcome.block)
                break  # a blocked call needs no further opinion
        return Outcome(block=block, context="\n".join(contexts))

    def _tool_details(self, tool_use_id: str, tool: Tool, tool_input: dict) -> dict:
        tool_input = _ported_input(tool, tool_input, self.cwd)
        return {"tool_name": tool.name, "tool_input": tool_input, "tool_use_id": tool_use_id}

    def _context(self, event: str, outcome: Outcome) -> str:
        return system_hint("hook", outcome.context, event=event) if outcome.context else ""


def _ported_input(tool: Tool, tool_input: dict, cwd: Path) -> dict:
    """The call's arguments, with `file_path` (absolute) beside `path` for a tool whose key argument is a path (the
    file tools), as ported hooks read."""
    path = tool_input.get("path") if tool.key_argument == "path" else None
    if not isinstance(path, str):
        return tool_input
    return {**tool_input, "file_path": os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))}


NO_HOOKS = Hooks((), Path("."))
"""For an agent without hooks: every event finds nothing to run."""
