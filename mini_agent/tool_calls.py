"""Running the tool calls of one reply: each validated and authorised, consecutive read-only calls side by side,
every call settled with a result in call order (after an interrupt too), and tool health tracked (three network
failures in a row mark a tool degraded in the system prompt)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from mini_agent import threads
from mini_agent.context.call_lines import INTERRUPTED, call_line, interrupted_text
from mini_agent.events import Emit, HintChanged, Notice, ToolDenied, ToolFinished, ToolStarted
from mini_agent.model.messages import tool_result, tool_uses
from mini_agent.model.wellformed import safe_text
from mini_agent.safety.denials import hook_denial
from mini_agent.safety.permissions import Deny
from mini_agent.step_preload import PRELOAD
from mini_agent.tools.base import Tool, ToolContext, ToolError, ToolRegistry, ToolResult, execute
from mini_agent.xmltext import system_hint

if TYPE_CHECKING:
    from mini_agent.conversation import Session
    from mini_agent.gate import Gate
    from mini_agent.hooks import Hooks
    from mini_agent.safety.planted import PlantedWatch
    from mini_agent.safety.secrets import SecretSet

DEGRADED_AFTER = 3
MAY_CHANGE_FILES = ("exec", "mcp")
"""Risks whose calls take the turn's undo snapshot first, beside the tools declared to edit files: a command may
write anything, and so may an MCP tool not declared read-only."""


class ToolHost(Protocol):
    """What running tool calls needs of the agent that owns them (the agent imports this module, not the reverse)."""

    registry: ToolRegistry
    gate: Gate
    secrets: SecretSet
    ctx: ToolContext
    session: Session
    emit: Emit
    before_change: Callable[[], None] | None
    hooks: Hooks

    def tool_ran(self, line: str, risk: str, written: Path | None) -> None:
        """A call finished: `line` for the recent-activity block; `risk` and the file it `written` tell which
        context sources it may have made stale."""


class ToolCalls:
    """The agent's hands: it owns the results of the reply being answered and the tools' network health."""

    def __init__(self, agent: ToolHost) -> None:
        self.agent = agent
        self._pool: ThreadPoolExecutor | None = None
        self._results: dict[str, ToolResult] = {}
        self._network_failures: dict[str, int] = {}
        self._hook_context: dict[str, str] = {}
        """What PreToolUse hooks added for a call, to go after its result."""
        self._planted: PlantedWatch | None = None
        """The protected places a call that may change files is watched on, made at the first such call."""
        self.answer: str | None = None
        """What the last reply's calls end the turn with (a plan nobody could approve), or None: it goes on."""

    def forget(self) -> None:
        """A new conversation: no results pending, no failures counted."""
        self._results = {}
        self._network_failures.clear()

    def run(self, calls: list[dict], refused: dict[str, str] | None = None) -> list[dict]:
        """Run every call of a reply; consecutive read-only calls run together. Results keep call order.

        `refused`: calls never to run (cut short, malformed), by id, each answered with the error given."""
        PRELOAD.wait_for_tools()  # started when the first request went out; loaded by now with a real model
        self._results, self._hook_context, self.answer = {}, {}, None
        self.agent.ctx.cancelled.clear()
        batch: list[tuple[dict, Tool, dict]] = []
        for call in calls:
            if refused and call["id"] in refused:
                self._settle(call, ToolResult(refused[call["id"]], is_error=True))
                continue
            planned = self._plan(call)
            if planned is None:
                continue
            tool, arguments, confinement = planned
            if tool.risk == "read" and (tool.concurrent is None or tool.concurrent(arguments)):
                batch.append((call, tool, arguments))
                continue
            self._run_batch(batch)
            batch = []
            self._run_one(call, tool, arguments, confinement)
        self._run_batch(batch)
        done = self._results
        self.answer = next((done[c["id"]].answer for c in calls if done[c["id"]].answer is not None), None)
        return [tool_result(c["id"], r.content, r.is_error, r.blocks) for c in calls for r in (done[c["id"]],)]

    def _plan(self, call: dict) -> tuple[Tool, dict, object] | None:
        """Validate and authorise a call; a refusal or a malformed call is settled here as an error result.

        Returns the tool, its arguments and, for a shell command, the sandbox it is confined to (None: outside).
        """
        tool = self.agent.registry.get(call["name"])
        if tool is None:
            self._settle(call, self.agent.registry.unknown(call["name"]))
            return None
        try:
            arguments = tool.validate(call.get("input"))
        except ToolError as exc:
            self._settle(call, ToolResult(str(exc), is_error=True))
            return None
        hooked = self.agent.hooks.before_tool(call["id"], tool, arguments)  # before anyone is asked
        if hooked.blocked is not None:
            self._settle(call, ToolResult(hooked.blocked, is_error=True))
            denied = hook_denial(hooked.blocked)
            self.agent.emit(ToolDenied(call["id"], call["name"], call.get("input"), denied, tool))
            return None
        if hooked.context:
            self._hook_context[call["id"]] = hooked.context
        verdict = self.agent.gate.authorise(tool, arguments)
        if isinstance(verdict, Deny):
            self._settle(call, ToolResult(verdict.message, is_error=True, shown=verdict.shown))
            self._report_denials(call, tool)
            if verdict.stop_turn:
                raise KeyboardInterrupt
            return None
        return tool, arguments, self.agent.gate.confinement(verdict) if tool.risk == "exec" else None

    def _settle(self, call: dict, result: ToolResult) -> None:
        result = replace(result, content=safe_text(self.agent.secrets.mask(result.content)))  # it may quote the call
        self._results[call["id"]] = result
        tool = self.agent.registry.get(call["name"])
        self.agent.emit(ToolStarted(call["id"], call["name"], call.get("input"), tool))
        self.agent.emit(ToolFinished(call["id"], call["name"], call.get("input"), result, 0.0, tool))

    def _execute(self, tool: Tool, arguments: dict, confinement: object = None) -> ToolResult:
        """Run a tool; every known secret is masked in what it returns (`env | base64`, a config dump), in any
        encoding, including the values of `.env` files the command may just have written or read, and the
        passwords of URLs in it (`git remote -v`), which become known secrets."""
        self.agent.ctx.confinement = confinement  # exec tools run one at a time, so the shared context can carry it
        try:
            result = execute(tool, arguments, self.agent.ctx)
        finally:
            self.agent.ctx.confinement = None
        self.agent.secrets.refresh()
        # What the model, the session and the renderers get is the same sendable text: a file name that is not
        # UTF-8 (decoded with surrogateescape) shows as `\xff`, never as a lone surrogate (model/wellformed.py).
        masked = safe_text(self.agent.secrets.mask_output(result.content, f"the output of {tool.name}"))
        if result.todos:  # the model's words, kept in the session file and shown
            result = replace(result, todos=tuple(todo.rewritten(self.agent.secrets.mask) for todo in result.todos))
        return result if masked == result.content else replace(result, content=masked)

    def _run_one(self, call: dict, tool: Tool, arguments: dict, confinement: object = None) -> None:
        if self.agent.before_change is not None and (tool.edits_files or tool.risk in MAY_CHANGE_FILES):
            self.agent.before_change()
        self.agent.emit(ToolStarted(call["id"], tool.name, arguments, tool))
        watch = self._watch() if tool.risk in ("write", "exec") else None
        instructions = self._instruction_files() if watch else []
        seen = watch.look(instructions) if watch else {}
        started = time.monotonic()
        try:
            result = self._execute(tool, arguments, confinement)
        except KeyboardInterrupt as exc:
            self._interrupted([call], tool, started, getattr(exc, "output", ""), getattr(exc, "told", None))
            raise
        finally:
            if watch:  # the human hears of it on the terminal, not only the model in the result
                from mini_agent.safety.planted import notices

                changed = watch.changed(seen)
                for text in notices(changed):
                    self.agent.emit(Notice(text))
                self._remember_instructions([path for path in changed if path in instructions])
                self._remember_skills()
        result = self._results[call["id"]] = self._with_hooks(call, tool, arguments, result)
        seconds = time.monotonic() - started
        written = self._written(tool, arguments)
        if written is not None and not result.is_error:  # an instruction file anywhere, not only those watched
            from mini_agent.context.instruction_files import INSTRUCTION_NAMES

            if written.name in INSTRUCTION_NAMES:
                self._remember_instructions([Path(os.path.realpath(written))])
        self._after_tool(tool, arguments, result, seconds, confinement)
        self.agent.emit(ToolFinished(call["id"], tool.name, arguments, result, seconds, tool))
        self._report_denials(call, tool)  # web_fetch asks about a private address only once it has resolved it

    def _instruction_files(self) -> list[Path]:
        from mini_agent.context.instruction_text import watched_paths

        return watched_paths(Path(self.agent.ctx.cwd), self.agent.gate.settings.user_dir)

    def _remember_instructions(self, written: list[Path]) -> None:
        """Instruction text this call wrote is data, not orders, until the human trusts it (every session)."""
        if written:
            from mini_agent.context.instruction_trust import remember_files
            from mini_agent.errors import MiniAgentError

            try:
                remember_files(self.agent.gate.settings.data_dir, written)
            except (OSError, MiniAgentError) as exc:  # the call itself went fine: say what could not be kept
                names = ", ".join(map(str, written))
                self.agent.emit(Notice(f"Could not remember that {names} changed ({exc}): check it yourself."))

    def _remember_skills(self) -> None:
        """A skill folder changed during the session is not offered until the human trusts it, in the sessions
        after this one too (this one knows by its ctime). Every folder is looked at, not only where the watch saw
        a change: a background job may have written one since the last call."""
        from mini_agent.context.skill_trust import remember_changed, skill_roots
        from mini_agent.errors import MiniAgentError

        settings = self.agent.gate.settings
        roots = [root for _scope, root in skill_roots(Path(self.agent.ctx.cwd), settings.user_dir)]
        try:
            remember_changed(settings.data_dir, roots, self.agent.gate.started)
        except (OSError, MiniAgentError) as exc:
            self.agent.emit(Notice(f"Could not remember which skills changed ({exc}): check them yourself."))

    def _watch(self) -> PlantedWatch:
        if self._planted is None:
            from mini_agent.safety.planted import PlantedWatch  # the sandbox's modules: not at start-up

            self._planted = PlantedWatch(self.agent.gate.settings.cwd)
        return self._planted

    def _report_denials(self, call: dict, tool: Tool) -> None:
        for denial in self.agent.gate.take_denials():
            self.agent.emit(ToolDenied(call["id"], call["name"], call.get("input"), denial, tool))

    def _run_batch(self, batch: list[tuple[dict, Tool, dict]]) -> None:
        if len(batch) <= 1:
            for item in batch:
                self._run_one(*item)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(4, "tool", initializer=threads.leave_to_main)
        for call, tool, arguments in batch:
            self.agent.emit(ToolStarted(call["id"], tool.name, arguments, tool))
        started = time.monotonic()
        futures = [self._pool.submit(self._execute, tool, arguments) for _, tool, arguments in batch]
        for index, ((call, tool, arguments), future) in enumerate(zip(batch, futures, strict=True)):
            try:
                result = future.result()
            except KeyboardInterrupt:
                self.agent.ctx.cancelled.set()
                self._interrupted([item[0] for item in batch[index:]], tool, started, "")
                raise
            result = self._results[call["id"]] = self._with_hooks(call, tool, arguments, result)
            seconds = time.monotonic() - started
            self._after_tool(tool, arguments, result, seconds)
            self.agent.emit(ToolFinished(call["id"], tool.name, arguments, result, seconds, tool))

    def _with_hooks(self, call: dict, tool: Tool, arguments: dict, result: ToolResult) -> ToolResult:
        """What PreToolUse hooks added and what PostToolUse hooks say follow the result, for the model."""
        after = self.agent.hooks.after_tool(call["id"], tool, arguments, result)
        added = [text for text in (self._hook_context.pop(call["id"], ""), after) if text]
        return replace(result, content="\n\n".join([result.content, *added])) if added else result

    def _interrupted(self, calls: list[dict], tool: Tool, started: float, output: str, told: str | None = None) -> None:
        """Ctrl-C stopped these running calls: the model hears how long they ran and what they printed, not "Not
        run", since a command killed half-way may have changed things; `told` instead, from a call that knows it
        changed nothing."""
        seconds = time.monotonic() - started
        text = told or interrupted_text(tool.risk, seconds, output)
        for call in calls:
            result = self._results[call["id"]] = ToolResult(
                safe_text(self.agent.secrets.mask_output(text, f"the output of {tool.name}")),
                is_error=True,
                killed_by=INTERRUPTED,
            )
            # The human keeps the call's line and what it printed, as the model does (not just "Interrupted.").
            called = self.agent.registry.get(call["name"]) or tool  # a batch's other calls may be other tools
            self.agent.emit(ToolFinished(call["id"], called.name, call.get("input"), result, seconds, called))

    def _after_tool(
        self, tool: Tool, arguments: dict, result: ToolResult, seconds: float, confinement: object = None
    ) -> None:
        self._track_health(tool.name, result)
        if result.todos is not None:
            self.agent.session.record_todos(result.todos)
        line = call_line(tool.name, arguments, result, datetime.now().astimezone(), seconds)
        changed = reach(tool, confinement, self.agent.settings.user_dir)
        self.agent.tool_ran(self.agent.secrets.mask(line), changed, self._written(tool, arguments))

    def _written(self, tool: Tool, arguments: dict) -> Path | None:
        """The file a tool that edits files changed, so the context sources that read it re-read it."""
        path = arguments.get(tool.key_argument) if tool.edits_files and tool.key_argument else None
        return self.agent.ctx.cwd / os.path.expanduser(path) if isinstance(path, str) else None

    def _track_health(self, name: str, result: ToolResult) -> None:
        """Three network failures in a row mark a tool degraded in segment 3; any other outcome clears it."""
        key = f"tool_degraded:{name}"
        if result.network_error:
            self._network_failures[name] = self._network_failures.get(name, 0) + 1
            if self._network_failures[name] == DEGRADED_AFTER:
                text = (
                    f"{name} failed {DEGRADED_AFTER} times in a row with network errors, the last: "
                    f"{result.content[:200]} The network may be unavailable: avoid {name} unless the user asks "
                    "for it, and say so if the task needs it."
                )
                self.agent.session.hints[key] = system_hint("tool_degraded", text, tool=name)
                self.agent.emit(HintChanged(key, self.agent.session.hints[key]))
            return
        self._network_failures.pop(name, None)
        if self.agent.session.hints.pop(key, None) is not None:
            self.agent.emit(HintChanged(key, None))

    def settle_dangling(self, reason: str) -> None:
        """After an interrupt, give every unanswered tool_use a result (those that finished keep theirs)."""
        messages = self.agent.session.messages
        if not messages or messages[-1]["role"] != "assistant":
            return
        calls = tool_uses(messages[-1])
        if not calls:
            return
        done = self._results
        blocks = [
            tool_result(c["id"], done[c["id"]].content, done[c["id"]].is_error, done[c["id"]].blocks)
            if c["id"] in done
            else tool_result(c["id"], reason, True)
            for c in calls
        ]
        self.agent.session.append({"role": "user", "content": blocks})


def reach(tool: Tool, confinement: object, user_dir: Path) -> str:
    """What a finished call may have changed, for the context sources cached from before it: a command confined
    read-only changed nothing they read ("read"); one confined to the project's tree ("exec-project") not the
    user's files (memory, instructions outside the project) unless they lie in that tree; one that ran outside
    any sandbox anything ("exec")."""
    level = getattr(confinement, "level", None)
    if tool.risk != "exec" or level is None:
        return tool.risk
    if level == "read-only":
        return "read"
    root = str(getattr(confinement, "root", "/"))
    inside = str(user_dir) == root or str(user_dir).startswith(root.rstrip("/") + "/")
    return "exec" if inside else "exec-project"
