"""The loop: ask the model, run the tools it calls, send the results back, until it is done."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mini_agent.errors import ContextOverflow, StepLimitReached, TurnAborted
from mini_agent.events import AssistantMessage, Emit, HintChanged, Notice, ToolFinished, ToolStarted
from mini_agent.messages import text_of, tool_result, tool_uses, with_cache_breakpoint
from mini_agent.prompt import build_system, system_hint
from mini_agent.provider import Provider, Reply, Request
from mini_agent.provider.client import DISCOVERY_WAIT
from mini_agent.provider.discovery import Discovery
from mini_agent.safety.gate import Confirm, Gate
from mini_agent.safety.permissions import Deny
from mini_agent.session import Session
from mini_agent.settings import DEFAULT_CONTEXT_WINDOW, Settings
from mini_agent.tools._pending import sweep
from mini_agent.tools.base import Tool, ToolContext, ToolError, ToolRegistry, ToolResult, execute
from mini_agent.usage import Usage

if TYPE_CHECKING:
    from mini_agent.injection import TurnTrace
    from mini_agent.keeper import ContextKeeper

DEGRADED_AFTER = 3
RECENT_CALLS = 8


@dataclass(frozen=True)
class TurnResult:
    text: str
    """The final answer: the text of the last reply."""
    stop_reason: str | None
    steps: int
    usage: Usage
    is_error: bool = False
    trace: TurnTrace | None = None
    """What the agent added beside the user's words this turn, and why."""


class Agent:
    def __init__(
        self,
        provider: Provider,
        registry: ToolRegistry,
        settings: Settings,
        session: Session,
        ctx: ToolContext,
        static_prompt: str,
        emit: Emit,
        confirm: Confirm,
        keeper: Callable[[Agent], ContextKeeper] | None = None,
    ) -> None:
        """`keeper` builds the context keeper for this agent; by default one without context sources."""
        self.provider, self.registry, self.settings = provider, registry, settings
        self.session, self.ctx, self.static_prompt = session, ctx, static_prompt
        self.secrets = ctx.secrets = ctx.secrets if ctx.secrets is not None else settings.secret_set
        """The session's known secrets: masked in every tool result and event, and never sent out without a yes."""
        self.emit: Emit = lambda event: emit(self.secrets.mask_event(event))
        self._system: tuple[dict, list[dict]] | None = None
        self._overhead: tuple[list[dict], int] | None = None
        self._network_failures: dict[str, int] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._results: dict[str, ToolResult] = {}
        self._calls: deque[str] = deque(maxlen=RECENT_CALLS)
        self.gate = Gate(settings, ctx, confirm, registry.get, lambda text: self.emit(Notice(text)))
        ctx.check_destination = self.gate.check_destination
        if ctx.data_dir is None:
            ctx.data_dir = settings.data_dir  # where atomic writes record their temporary files
        sweep(settings.data_dir)  # the temporary files of agents that were killed mid-write
        self._told: set[str] = set()
        self.run_hints: dict[str, str] = {}
        """Segment-3 hints true of this process only (a one-shot run: nobody to ask), never saved with the session."""
        self.notes: list[str] = []
        """Things the model must hear at the start of the next turn (e.g. the user undid its changes)."""
        self.before_change: Callable[[], None] | None = None
        """Called before each tool that may change files runs (write and exec tools): the undo snapshot."""
        if keeper is None:
            from mini_agent.keeper import minimal_keeper as keeper
        self.keeper = keeper(self)

    def run_turn(self, text: str, stdin: str | None = None) -> TurnResult:
        """One user turn, at most max_steps model requests; Ctrl-C becomes TurnAborted with the transcript valid.

        `stdin` is piped input (escaped, capped) that goes beside the text as a P0 context block.
        """
        self.ctx.request = text
        self.secrets.refresh()  # the project's .env files, read on first use and again after they change
        usage = Usage()
        notes, self.notes = self.notes, []
        try:
            self._endpoint_notices()
            trace = self.keeper.open_turn(
                self.session, text, stdin, self.ctx.cwd, self.ctx.recent_files(), tuple(self._calls), self.emit, notes
            )
            for step in range(1, self.settings.max_steps + 1):
                self.keeper.before_request(self.session, self.emit)
                reply = self._complete()
                usage = usage + reply.usage
                self._record(reply, step)
                calls = tool_uses(reply.message)
                if reply.stop_reason == "pause_turn":
                    continue  # a server tool paused the turn: sending the reply back resumes it
                if calls and reply.runs_tools():
                    self.session.append({"role": "user", "content": self._run_tools(calls)})
                    continue
                return replace(self._finish(reply, calls, step, usage), trace=trace)
            raise StepLimitReached(self.settings.max_steps)
        except KeyboardInterrupt:
            self._settle_dangling_calls("Not run: the user interrupted the turn.")
            raise TurnAborted() from None

    def forget(self) -> None:
        """A clean slate for a new conversation (/clear): the files read and their stamps (so an edit needs a fresh
        read), the recent calls, tool health, pending notes and the context cache go with the old one."""
        with self.ctx.lock:
            self.ctx.read_files.clear()
        self._calls.clear()
        self._results = {}
        self._network_failures.clear()
        self.notes = []
        self.keeper.forget()

    def remember_calls(self, lines: list[str]) -> None:
        """Recent tool calls of a resumed session (as `call_line` writes them), for the recent-activity block."""
        self._calls.clear()
        self._calls.extend(lines)

    def request(self) -> Request:
        """The next request: stable system and tools, the transcript with a moving cache breakpoint."""
        return Request(
            model=self.settings.model,
            system=self._system_blocks(),
            messages=with_cache_breakpoint(self.session.messages),
            tools=self.registry.schemas(),
            max_tokens=self.output_limit(),
        )

    def _complete(self) -> Reply:
        """One model request; "prompt is too long" compacts the conversation and tries once more."""
        try:
            return self.provider.complete(self.request(), self.emit)
        except ContextOverflow:
            if not self.keeper.overflowed(self.session, self.emit):
                raise
            return self.provider.complete(self.request(), self.emit)

    def _endpoint_notices(self) -> None:
        """What the endpoint said about itself that the human must know (e.g. a window too small), once."""
        for text in self._endpoint().notices:
            self._tell_once(True, text, text)

    def window(self) -> int:
        """The context window: the user's setting, else what the endpoint said (waited for on first use)."""
        return self.settings.context_window or self._endpoint().window or DEFAULT_CONTEXT_WINDOW

    def output_limit(self) -> int:
        """Output tokens a reply may use. Where prompt and reply share the window (vLLM, llama.cpp, Ollama), a
        quarter of it at most: a server that counts the limit against the window rejects what cannot fit."""
        if self._endpoint().shared:
            return max(1, min(self.settings.max_tokens, self.window() // 4))
        return self.settings.max_tokens

    def input_window(self) -> int:
        """Tokens the prompt may use: the window, less the room a reply needs where they share it."""
        return self.window() - self.output_limit() if self._endpoint().shared else self.window()

    def _endpoint(self) -> Discovery:
        return self.provider.discovery(wait=DISCOVERY_WAIT)

    def overhead(self) -> int:
        """Tokens of system prompt and tools, counted once per system-prompt change."""
        from mini_agent.keeper import overhead_tokens

        system = self._system_blocks()
        if self._overhead is None or self._overhead[0] is not system:
            self._overhead = (system, overhead_tokens(system, self.registry.schemas()))
        return self._overhead[1]

    def _system_blocks(self) -> list[dict]:
        hints = {**self.session.hints, **self.run_hints} if self.run_hints else self.session.hints
        if self._system is None or self._system[0] != hints:
            self._system = (dict(hints), build_system(self.static_prompt, self.registry, hints))
        return self._system[1]

    def _record(self, reply: Reply, step: int) -> None:
        self.session.record_usage(reply.usage)
        if reply.message["content"]:
            self.session.append(reply.message)
        self.keeper.after_reply(reply.usage if reply.usage_reported else None, self.session)
        unreported = "The endpoint did not say how many tokens the prompt took: the conversation's size is estimated."
        self._tell_once(not reply.usage_reported, "usage", unreported)
        for kind in reply.dropped:
            self._tell_once(
                True,
                f"dropped:{kind}",
                f"The endpoint sent a {kind!r} block, which it would not accept "
                "back in the conversation: it was left out.",
            )
        self.emit(AssistantMessage(reply.message, reply.stop_reason, reply.usage, step))

    def _tell_once(self, condition: bool, key: str, text: str) -> None:
        """A notice the human needs once per session, not once per reply."""
        if condition and key not in self._told:
            self._told.add(key)
            self.emit(Notice(text))

    def _finish(self, reply: Reply, calls: list[dict], step: int, usage: Usage) -> TurnResult:
        is_error = reply.stop_reason in ("refusal", "max_tokens")
        if reply.stop_reason == "refusal":
            explanation = (reply.stop_details or {}).get("explanation")
            detail = f": {explanation}" if explanation else "."
            self.emit(Notice(f"The model declined to continue (stop reason: refusal){detail}"))
        elif reply.stop_reason == "max_tokens":
            self.emit(
                Notice(
                    f"The reply was cut off at the output limit ({self.output_limit()} tokens); "
                    "raise --max-tokens or ask the model to continue."
                )
            )
        if calls:  # never leave a tool_use without its result: the next request would be rejected
            reason = f"Not run: the reply ended with stop reason {reply.stop_reason!r} before the call was complete."
            self.session.append({"role": "user", "content": [tool_result(c["id"], reason, True) for c in calls]})
        return TurnResult(self.secrets.mask(text_of(reply.message)), reply.stop_reason, step, usage, is_error)

    # ---- tools ---------------------------------------------------------------------------------------

    def _run_tools(self, calls: list[dict]) -> list[dict]:
        """Run every call of a reply; consecutive read-only calls run together. Results keep call order."""
        self._results = {}
        batch: list[tuple[dict, Tool, dict]] = []
        for call in calls:
            planned = self._plan(call)
            if planned is None:
                continue
            tool, arguments, confinement = planned
            if tool.risk == "read":
                batch.append((call, tool, arguments))
                continue
            self._run_batch(batch)
            batch = []
            self._run_one(call, tool, arguments, confinement)
        self._run_batch(batch)
        return [tool_result(c["id"], self._results[c["id"]].content, self._results[c["id"]].is_error) for c in calls]

    def _plan(self, call: dict) -> tuple[Tool, dict, object] | None:
        """Validate and authorise a call; a refusal or a malformed call is settled here as an error result.

        Returns the tool, its arguments and, for a shell command, the sandbox it is confined to (None: outside).
        """
        tool = self.registry.get(call["name"])
        if tool is None:
            self._settle(call, self.registry.unknown(call["name"]))
            return None
        try:
            arguments = tool.validate(call.get("input"))
        except ToolError as exc:
            self._settle(call, ToolResult(str(exc), is_error=True))
            return None
        verdict = self.gate.authorise(tool, arguments)
        if isinstance(verdict, Deny):
            self._settle(call, ToolResult(verdict.message, is_error=True))
            if verdict.stop_turn:
                raise KeyboardInterrupt
            return None
        return tool, arguments, self.gate.confinement(verdict) if tool.risk == "exec" else None

    @property
    def mode(self) -> str:
        """The permission mode; the REPL changes it between turns (Shift+Tab, /mode)."""
        return self.gate.mode

    @mode.setter
    def mode(self, mode: str) -> None:
        self.gate.mode = mode

    def _settle(self, call: dict, result: ToolResult) -> None:
        result = replace(result, content=self.secrets.mask(result.content))  # a refusal may quote the call
        self._results[call["id"]] = result
        self.emit(ToolStarted(call["id"], call["name"], call.get("input")))
        self.emit(ToolFinished(call["id"], call["name"], call.get("input"), result, 0.0))

    def _execute(self, tool: Tool, arguments: dict, confinement: object = None) -> ToolResult:
        """Run a tool; every known secret is masked in what it returns (`env | base64`, a config dump), in any
        encoding, including the values of `.env` files the command may just have written or read."""
        self.ctx.confinement = confinement  # exec tools run one at a time, so the shared context can carry it
        try:
            result = execute(tool, arguments, self.ctx)
        finally:
            self.ctx.confinement = None
        self.secrets.refresh()
        masked = self.secrets.mask(result.content)
        return result if masked == result.content else replace(result, content=masked)

    def _run_one(self, call: dict, tool: Tool, arguments: dict, confinement: object = None) -> None:
        if self.before_change is not None and tool.risk in ("write", "exec"):
            self.before_change()
        self.emit(ToolStarted(call["id"], tool.name, arguments))
        started = time.monotonic()
        result = self._execute(tool, arguments, confinement)
        self._results[call["id"]] = result
        self._after_tool(tool, arguments, result)
        self.emit(ToolFinished(call["id"], tool.name, arguments, result, time.monotonic() - started))

    def _run_batch(self, batch: list[tuple[dict, Tool, dict]]) -> None:
        if len(batch) <= 1:
            for item in batch:
                self._run_one(*item)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="tool")
        for call, tool, arguments in batch:
            self.emit(ToolStarted(call["id"], tool.name, arguments))
        started = time.monotonic()
        futures = [self._pool.submit(self._execute, tool, arguments) for _, tool, arguments in batch]
        for (call, tool, arguments), future in zip(batch, futures, strict=True):
            result = future.result()
            self._results[call["id"]] = result
            self._after_tool(tool, arguments, result)
            self.emit(ToolFinished(call["id"], tool.name, arguments, result, time.monotonic() - started))

    def _after_tool(self, tool: Tool, arguments: dict, result: ToolResult) -> None:
        self._track_health(tool.name, result)
        self._calls.append(self.secrets.mask(call_line(tool.name, arguments, result)))
        self.keeper.engine.tool_ran(tool.risk)

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
                self.session.hints[key] = system_hint("tool_degraded", text, tool=name)
                self.emit(HintChanged(key, self.session.hints[key]))
            return
        self._network_failures.pop(name, None)
        if self.session.hints.pop(key, None) is not None:
            self.emit(HintChanged(key, None))

    def _settle_dangling_calls(self, reason: str) -> None:
        """After an interrupt, give every unanswered tool_use a result (those that finished keep theirs)."""
        messages = self.session.messages
        if not messages or messages[-1]["role"] != "assistant":
            return
        calls = tool_uses(messages[-1])
        if not calls:
            return
        done = self._results
        blocks = [
            tool_result(c["id"], done[c["id"]].content, done[c["id"]].is_error)
            if c["id"] in done
            else tool_result(c["id"], reason, True)
            for c in calls
        ]
        self.session.append({"role": "user", "content": blocks})


def call_line(name: str, arguments: dict, result: ToolResult) -> str:
    """A tool call as one line for the recent-activity block: what ran and how it went."""
    shown = json.dumps(arguments, ensure_ascii=False)
    if len(shown) > 120:
        shown = shown[:117] + "..."
    outcome = "error: " + result.content.splitlines()[0][:80] if result.is_error and result.content else "ok"
    return f"{name} {shown} -> {outcome}"
