"""The session's hooks, called by the agent at each event: which hooks match, the JSON each gets on stdin, and
what their outcomes add up to (the first block wins; every context is kept, in order)."""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
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

SUBAGENT_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "Notification",
    "SubagentStop",
)
"""What a sub-agent's hooks are: its tool calls and questions like the parent's; its end is a SubagentStop (its
prompt is the parent's brief, its session the parent's)."""
SESSION_END_BUDGET = 5.0
"""Seconds all SessionEnd hooks together may take: the session is over, and its end must not wait on them."""


class PromptBlocked(MiniAgentError):
    """A UserPromptSubmit hook stopped the prompt: nothing was sent, and the human is told why."""

    exit_status = ExitStatus.DENIED


@dataclass(frozen=True)
class ToolVerdict:
    blocked: str | None = None
    """The result the model gets instead of the call running; None: the call goes on."""
    context: str = ""
    """What the hooks added, to go after the call's result."""


@dataclass(frozen=True)
class PermissionAnswer:
    """A PermissionRequest hook answered a question instead of the human."""

    allow: bool
    message: str = ""
    """Why it refused (exit 2's stderr, or `decision.message`): the model gets it."""


class Hooks:
    def __init__(self, hooks: Sequence[HookDef], cwd: Path) -> None:
        self._hooks = {event: tuple(hook for hook in hooks if hook.event == event) for event in EVENTS}
        self.cwd = cwd
        self.emit: Emit = lambda event: None
        self.mode: Callable[[], str] = lambda: "default"
        self.model: Callable[[], str] = lambda: ""
        self.transcript: Callable[[], tuple[str, str]] = lambda: ("", "")
        """The session's id and the path of its file, for the JSON every hook gets."""
        self.mask: Callable[[str], str] = lambda text: text
        """Known secrets out of what a hook printed before the model sees it."""
        self.environment: Callable[[], dict[str, str]] | None = None
        """The environment a hook inherits; None: ours, whole."""
        self._stop_active = False
        self._agent: dict[str, str] = {}
        """A sub-agent's `agent_id` and `agent_type`, in every event it fires; empty for the main agent."""

    def __bool__(self) -> bool:
        return any(self._hooks.values())

    def has(self, event: str) -> bool:
        return bool(self._hooks[event])

    def serving(
        self, emit: Emit, mask: Callable[[str], str], mode: Callable[[], str], model: Callable[[], str] | None = None
    ) -> Hooks:
        """These hooks bound to the agent they serve: they report through its events (masked, nested for a
        sub-agent), mask its secrets out of what they print, and tell its permission mode and model."""
        bound = copy.copy(self)
        bound.emit, bound.mask, bound.mode = emit, mask, mode
        bound.model = model or self.model
        return bound

    def for_subagent(self, agent_id: str, agent_type: str) -> Hooks:
        """A sub-agent's hooks (`SUBAGENT_EVENTS`), whose events name it."""
        narrowed = Hooks([hook for event in SUBAGENT_EVENTS for hook in self._hooks[event]], self.cwd)
        narrowed.mode, narrowed.transcript, narrowed.mask = self.mode, self.transcript, self.mask
        narrowed.environment, narrowed.model = self.environment, self.model
        narrowed._agent = {"agent_id": agent_id, "agent_type": agent_type}
        return narrowed

    # ---- tool calls ---------------------------------------------------------------------------------------

    def before_tool(self, tool_use_id: str, tool: Tool, tool_input: dict) -> ToolVerdict:
        details = partial(self._tool_details, tool_use_id, tool, tool_input)
        outcome = self._run("PreToolUse", tool.name, details, tool.alias)
        if outcome.block is not None:
            return ToolVerdict(blocked=f"Blocked by a PreToolUse hook: {outcome.block}")
        return ToolVerdict(context=self._context("PreToolUse", outcome))

    def after_tool(self, tool_use_id: str, tool: Tool, tool_input: dict, result: ToolResult) -> str:
        """Text to add after the call's result: a block's reason (the call already ran) or added context. A call
        that failed (an error result, or a command that exited non-zero) goes to the PostToolUseFailure hooks
        instead of the PostToolUse ones."""
        failed = result.is_error or result.exit_code not in (None, 0)
        event = "PostToolUseFailure" if failed else "PostToolUse"

        def details() -> dict:
            found = self._tool_details(tool_use_id, tool, tool_input)
            if failed:
                found.update(error=result.content, is_interrupt=False)
                if result.exit_code is not None:
                    found["exit_code"] = result.exit_code
                return found
            response: dict = {"content": result.content, "is_error": False}
            if result.exit_code is not None:  # the call ran a command
                response["exit_code"] = result.exit_code
            return {**found, "tool_response": response}

        outcome = self._run(event, tool.name, details, tool.alias)
        objection = f"A {event} hook objected: {outcome.block}" if outcome.block is not None else ""
        said = "\n".join(part for part in (outcome.context, objection) if part)
        return system_hint("hook", said, event=event) if said else ""

    def permission_request(
        self, tool: Tool, tool_input: dict, reason: str, risk: str, suggestions: list[dict]
    ) -> PermissionAnswer | None:
        """A question about to be put to the human: a hook may answer it (None: none did)."""

        def details() -> dict:
            ported = _ported_input(tool, tool_input, self.cwd)
            found = {"tool_name": tool.name, "tool_input": ported, "permission_suggestions": suggestions}
            return {**found, "reason": reason, "risk": risk}

        outcome = self._run("PermissionRequest", tool.name, details, tool.alias)
        if outcome.block is not None:
            return PermissionAnswer(False, outcome.block)
        return PermissionAnswer(True) if outcome.allows else None

    def notify(self, kind: str, message: str) -> None:
        """The agent waits for the human (`kind`: "permission_prompt")."""
        details = {"message": message, "notification_type": kind, "title": "mini-agent"}
        self._observe("Notification", kind, lambda: details)

    # ---- turns and the session ------------------------------------------------------------------------------

    def prompt_submitted(self, prompt: str) -> list[str]:
        """Context the hooks add to this turn; PromptBlocked when one stops the prompt."""
        self._stop_active = False
        outcome = self._run("UserPromptSubmit", None, lambda: {"prompt": prompt})
        if outcome.block is not None:
            raise PromptBlocked(f"A UserPromptSubmit hook stopped the prompt: {outcome.block}")
        context = self._context("UserPromptSubmit", outcome)
        return [context] if context else []

    def stopping(self, last_message: str) -> str | None:
        """The model is done: a Stop hook (a sub-agent's: SubagentStop) may send it back to work, with its reason
        as the next user message."""
        event = "SubagentStop" if self._agent else "Stop"
        details = {"stop_hook_active": self._stop_active, "last_assistant_message": last_message}
        outcome = self._run(event, self._agent.get("agent_type"), lambda: details)
        if outcome.block is None:
            return None
        self._stop_active = True
        return system_hint("hook", f"A {event} hook says the task is not done: {outcome.block}", event=event)

    def before_compaction(self, trigger: str, focus: str | None) -> tuple[str | None, str | None]:
        """(why not, or None to go on; the focus with what the hooks added). Only automatic ones can be blocked."""
        kind = _trigger(trigger)
        outcome = self._run("PreCompact", kind, lambda: {"trigger": kind, "custom_instructions": focus or ""})
        if outcome.block is not None and kind == "auto":
            return f"a PreCompact hook blocked it: {outcome.block}", focus
        added = outcome.context
        return None, "\n".join(part for part in (focus, added) if part) or None

    def after_compaction(self, trigger: str, summary: str, before: int, after: int) -> str:
        """PostCompact (told the summary and the sizes), then SessionStart with source "compact": what those
        SessionStart hooks add, for the model to read right after the summary."""
        kind = _trigger(trigger)
        details = {"trigger": kind, "compact_summary": summary, "tokens_before": before, "tokens_after": after}
        self._observe("PostCompact", kind, lambda: details)
        return self.session_started("compact")

    def session_started(self, source: str) -> str:
        """SessionStart ("startup", "resume", "clear", "compact"): the context its hooks add, as a hint."""
        outcome = self._observe("SessionStart", source, lambda: {"source": source, "model": self.model()})
        return self._context("SessionStart", outcome)

    def session_ended(self, reason: str, quiet: bool = False) -> None:
        """SessionEnd ("clear", "resume", "prompt_input_exit", "other"), within `SESSION_END_BUDGET` in all.
        `quiet`: nothing is reported (a signal handler: the renderers may be mid-write)."""
        self._observe("SessionEnd", reason, lambda: {"reason": reason}, budget=SESSION_END_BUDGET, quiet=quiet)

    # ---- running them -----------------------------------------------------------------------------------------

    def _observe(self, event: str, subject: str | None, details: Callable[[], dict], **how) -> Outcome:
        """An event nothing can stop: a hook's exit 2 only shows its stderr to the human."""
        outcome = self._run(event, subject, details, **how)
        if outcome.block is not None and not how.get("quiet"):
            self.emit(Notice(f"{event} hook: {outcome.block}"))
        return outcome

    def _run(
        self,
        event: str,
        subject: str | None,
        details: Callable[[], dict],
        alias: str | None = None,
        budget: float | None = None,
        quiet: bool = False,
    ) -> Outcome:
        """`details` builds the event's own fields, only when a hook matches: most calls of most sessions have none.
        `alias`: the tool's other name, which a matcher may use instead. `budget`: seconds for all of them."""
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
            **self._agent,
            **details(),
        }
        environment = self.environment() if self.environment else None
        block, contexts, allows = None, [], False
        deadline = time.monotonic() + budget if budget is not None else None
        for hook in hooks:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                hook = replace(hook, timeout=min(hook.timeout, left))
            run = run_hook(hook, payload, self.cwd, environment)
            outcome = read_outcome(run)
            if not quiet:
                self.emit(HookRan(event, hook.summary(), subject, run.exit_code, run.seconds, outcome.label))
                if outcome.message:
                    self.emit(Notice(outcome.message))
            allows = allows or outcome.allows
            if outcome.context:
                contexts.append(self.mask(outcome.context))
            if outcome.block is not None:
                block = self.mask(outcome.block)
                break  # a blocked call needs no further opinion
        return Outcome(block=block, context="\n".join(contexts), allows=allows and block is None)

    def _tool_details(self, tool_use_id: str, tool: Tool, tool_input: dict) -> dict:
        tool_input = _ported_input(tool, tool_input, self.cwd)
        return {"tool_name": tool.name, "tool_input": tool_input, "tool_use_id": tool_use_id}

    def _context(self, event: str, outcome: Outcome) -> str:
        return system_hint("hook", outcome.context, event=event) if outcome.context else ""


def _trigger(trigger: str) -> str:
    """Claude Code's two triggers: ours besides "manual" (context, overflow, auto) are all automatic."""
    return "manual" if trigger == "manual" else "auto"


def _ported_input(tool: Tool, tool_input: dict, cwd: Path) -> dict:
    """The call's arguments, with `file_path` (absolute) beside `path` for a tool whose key argument is a path (the
    file tools), as ported hooks read."""
    path = tool_input.get("path") if tool.key_argument == "path" else None
    if not isinstance(path, str):
        return tool_input
    return {**tool_input, "file_path": os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))}


NO_HOOKS = Hooks((), Path("."))
"""For an agent without hooks: every event finds nothing to run."""
