"""The loop: ask the model, run the tools it calls, send the results back, until it is done."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from mini_agent.conversation import Session
from mini_agent.errors import ContextOverflow, ImagesRejected, MiniAgentError, StepLimitReached, TurnAborted
from mini_agent.events import AssistantMessage, Emit, Event, ModelSwitched, Notice, ReplyDiscarded, TextDelta
from mini_agent.files.pending import sweep
from mini_agent.gate import Confirm, Gate
from mini_agent.hooks import NO_HOOKS, Hooks, PromptBlocked
from mini_agent.model import Provider, Reply, Request
from mini_agent.model.client import DISCOVERY_WAIT
from mini_agent.model.discovery import Discovery
from mini_agent.model.messages import text_of, tool_result, tool_uses, with_cache_breakpoint
from mini_agent.model.wellformed import safe
from mini_agent.prompt import build_system
from mini_agent.settings import DEFAULT_CONTEXT_WINDOW, Settings
from mini_agent.tool_calls import ToolCalls
from mini_agent.tools.base import ToolContext, ToolRegistry
from mini_agent.tools.deferred import CHARS_PER_TOKEN
from mini_agent.usage import Usage
from mini_agent.xmltext import system_hint

if TYPE_CHECKING:
    from pathlib import Path

    from mini_agent.context.blocks import Ledger
    from mini_agent.context.images import AttachedImage
    from mini_agent.context.injection import TurnTrace
    from mini_agent.context.keeper import ContextKeeper
    from mini_agent.mcp.manager import McpManager

RECENT_CALLS = 8
CUT_REPLIES = 2
"""Replies in a row whose calls were cut short after which the turn ends: asking again did not help."""
OVERFLOW_ADVICE = (
    "Compaction could not make the conversation any smaller: what is left is this turn's own message and "
    "context. Start a new conversation (/clear in the interactive session, or a run without --continue), switch "
    "to a model with a bigger context window, or attach less: a shorter file or @mention, less piped input."
)
IMAGES_REMOVED = (
    "[An image was here; it was removed because the model endpoint does not accept images. Ask the user to "
    "describe it if it matters.]"
)
INTERRUPTED_REPLY = "[The user interrupted this reply with Ctrl-C; it was cut here.]"
INTERRUPTED_BEFORE_REPLY = "[The user interrupted with Ctrl-C before this reply began.]"


class Delegator(Protocol):
    """What runs the `task` tool's sub-agents: told which agent is their parent once that agent exists."""

    def attach(self, parent: Agent) -> None: ...


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
    error: str | None = None
    """Why the turn did not end in an answer (a refusal, the output limit, an empty reply); None when it did."""


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
        *,
        hooks: Hooks = NO_HOOKS,
        mcp: McpManager | None = None,
        before_change: Callable[[], None] | None = None,
        delegation: Delegator | None = None,
        run_hints: dict[str, str] | None = None,
        permissions: Gate | None = None,
    ) -> None:
        """The agent, complete: nothing is assigned to it afterwards (app/build.py puts the parts together).

        `keeper` builds the context keeper for this agent; by default one without context sources. `hooks` are
        bound to this agent (its events, its secrets, its mode). `delegation` runs the `task` tool's sub-agents
        and is told its parent here. `permissions`: a sub-agent's gate starts as narrow as its parent's is now.
        """
        self.provider, self.registry, self.settings = provider, registry, settings
        self.ctx, self.static_prompt = ctx, static_prompt
        self._take(session)
        self.secrets = ctx.secrets = ctx.secrets if ctx.secrets is not None else settings.secret_set
        """The session's known secrets: masked in every tool result and event, and never sent out without a yes."""
        self._emit = emit
        self._streamed: list[str] | None = None
        """The text of the reply being streamed; None when no request is out (see `_keep_partial`)."""
        self._system: tuple[dict, list[dict]] | None = None
        self._overhead: tuple[list[dict], int] | None = None
        self._calls: deque[str] = deque(maxlen=RECENT_CALLS)
        """Recent tool calls as `call_line` writes them, for the recent-activity block."""
        self.tool_calls = ToolCalls(self)
        self.hooks = (
            hooks.serving(self.emit, self.secrets.mask, lambda: self.mode, lambda: self.settings.model)
            if hooks
            else NO_HOOKS
        )
        """The user's hooks, run at each event: a prompt, each tool call, a question, the turn's end."""
        self.gate = Gate(settings, ctx, confirm, registry.get, lambda text: self.emit(Notice(text)), self.hooks)
        if permissions is not None:
            self.gate.take_permissions(permissions)
        ctx.check_destination = self.gate.check_destination
        ctx.notify = lambda text: self.emit(Notice(text))
        if ctx.data_dir is None:
            ctx.data_dir = settings.data_dir  # where atomic writes record their temporary files
        sweep(settings.data_dir)  # the temporary files of agents that were killed mid-write
        self._told: set[str] = set()
        self.run_hints: dict[str, str] = dict(run_hints or {})
        """Segment-3 hints true of this process only (a one-shot run: nobody to ask), never saved with the session.
        Replaced whole, never changed in place (`set_run_hint`): a request may be reading them on another thread."""
        if permissions is None:  # a sub-agent presents no plan: the session's mode is its parent's to change
            ctx.review_plan = self._review_plan
            self._plan_hint()
        self.notes: list[str] = []
        """Things the model must hear at the start of the next turn (e.g. the user undid its changes)."""
        self.delegated = Usage()
        """Tokens this turn's sub-agents used: they count in the turn's usage (subagents/ adds them)."""
        self.usage_reported = True
        """Whether the last reply said how many tokens its prompt took (some servers leave it out)."""
        self.api_seconds = 0.0
        """Time spent waiting on the model since this agent was made (its requests, retries included)."""
        self.before_change = before_change
        """Called before each tool that may change files runs (write, exec and MCP tools): the undo snapshot."""
        self.mcp = mcp
        """The session's MCP servers when any are configured, for /mcp."""
        if keeper is None:
            from mini_agent.context.keeper import minimal_keeper as keeper
        self.keeper = keeper(self)
        self.delegation = delegation
        """The `task` tool's sub-agents (subagents.delegation.Delegation), None without the tool."""
        if delegation is not None:
            delegation.attach(self)

    def emit(self, event: Event) -> None:
        if self._streamed is not None:
            if isinstance(event, TextDelta):
                self._streamed.append(event.text)
            elif isinstance(event, ReplyDiscarded):
                self._streamed.clear()  # a retry streams the reply again from the start
        self._emit(self.secrets.mask_event(event))

    def run_turn(
        self,
        text: str,
        stdin: str | None = None,
        request: str | None = None,
        *,
        images: tuple[AttachedImage, ...] = (),
        pasted: bool = False,
    ) -> TurnResult:
        """One user turn, at most max_steps model requests; Ctrl-C becomes TurnAborted with the transcript valid.

        `stdin` is piped input (escaped, capped) that goes beside the text as a P0 context block. `request` is
        the user's own words when `text` is not them (a sub-agent's brief): what the tools see as ctx.request.
        `images` are image files the user attached (`--image`), read already; `pasted`: image paths in the text
        (dragged into the REPL) are attached too. `@` mentions of images always are (context/images.py).
        """
        self.ctx.request = text if request is None else request
        self.secrets.refresh()  # the project's .env files, read on first use and again after they change
        usage = self.delegated = Usage()
        try:
            self._endpoint_notices()
            notes, self.notes = [*self.notes, *self.hooks.prompt_submitted(text)], []  # kept if a hook stops it
            notes += self._job_endings()
            trace = self.keeper.open_turn(
                self.session, text, stdin, self.ctx.cwd, self.ctx.recent_files(), tuple(self._calls), self.emit, notes,
                images, pasted,
            )  # fmt: skip
            cut = 0
            for step in range(1, self.settings.max_steps + 1):
                self.keeper.before_request(self.session, self.emit)
                reply = self._complete()
                usage = usage + reply.usage
                self._record(reply, step)
                calls = tool_uses(reply.message)
                if reply.stop_reason == "pause_turn":
                    continue  # a server tool paused the turn: sending the reply back resumes it
                if calls and reply.runs_tools():
                    results = self.tool_calls.run(calls, reply.refused)
                    results += [{"type": "text", "text": note} for note in self._job_endings()]
                    self.session.append({"role": "user", "content": results})
                    if self.tool_calls.answer is not None:  # a plan nobody could approve: the run ends with it
                        answer = self.secrets.mask(self.tool_calls.answer)
                        return TurnResult(answer, "plan", step, usage + self.delegated, trace=trace)
                    cut = cut + 1 if reply.cut else 0
                    if cut == CUT_REPLIES:
                        return replace(self._finish(reply, [], step, usage + self.delegated, cut), trace=trace)
                    if reply.cut:
                        self.emit(
                            Notice(self._cut_text(reply) + " It was not run; the model is asked to send it again.")
                        )
                    continue
                if reply.stop_reason == "end_turn" and (more := self.hooks.stopping(text_of(reply.message))):
                    self.session.append({"role": "user", "content": [{"type": "text", "text": more}]})
                    continue
                return replace(self._finish(reply, calls, step, usage + self.delegated), trace=trace)
            raise StepLimitReached(self.settings.max_steps)
        except (TurnAborted, PromptBlocked):
            raise
        except MiniAgentError as exc:
            self.session.record_error(exc.kind, self.secrets.mask(str(exc)))
            raise
        except KeyboardInterrupt:
            self._keep_partial()
            self.tool_calls.settle_dangling("Not run: the user interrupted the turn.")
            raise TurnAborted() from None
        finally:
            self._streamed = None

    def _keep_partial(self) -> None:
        """A reply cut by Ctrl-C stays in the conversation as far as it got, marked, so the model knows what the
        user saw and the next prompt starts a user message of its own."""
        if self._streamed is None:
            return  # not waiting for a reply: the interrupt came between steps or during a tool
        partial = "".join(self._streamed).rstrip()
        text = f"{partial}\n\n{INTERRUPTED_REPLY}" if partial else INTERRUPTED_BEFORE_REPLY
        self.session.append({"role": "assistant", "content": [{"type": "text", "text": text}]})

    def forget(self) -> None:
        """A clean slate for a new conversation (/clear): the files read and their stamps (so an edit needs a fresh
        read), the recent calls, tool health, pending notes and the context cache go with the old one."""
        with self.ctx.lock:
            self.ctx.read_files.clear()
        self._calls.clear()
        self.tool_calls.forget()
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
            # an MCP server's descriptions may hold `\ud800` escapes
            tools=safe(self.registry.schemas(self.schema_budget())),
            max_tokens=self.output_limit(),
            effort=self.settings.effort,
        )

    def _complete(self) -> Reply:
        """One model request; "prompt is too long" compacts the conversation and tries once more."""
        self._streamed = []
        started = time.monotonic()
        try:
            try:
                reply = self._ask()
            except ContextOverflow as exc:
                # Sent again once whenever compaction changed the conversation, whatever it measured: the server's
                # error proved the request too big even when its usage reports (a router's zeros) said otherwise.
                before = self._conversation_text()
                self.keeper.overflowed(self.session, self.emit)
                if self._conversation_text() == before:
                    raise ContextOverflow(f"{exc} {OVERFLOW_ADVICE}") from None
                self._streamed = []
                try:
                    reply = self._ask()
                except ContextOverflow as again:
                    raise ContextOverflow(f"{again} {OVERFLOW_ADVICE}") from None
        except KeyboardInterrupt:
            raise  # what streamed so far stays for `_keep_partial`
        except BaseException:
            self._streamed = None
            raise
        finally:
            self.api_seconds += time.monotonic() - started
        self._streamed = None
        return reply

    def _ask(self) -> Reply:
        """The request sent; an endpoint that refuses images gets it again once without them: each image in the
        conversation becomes a note, for good (later requests would fail the same way)."""
        try:
            return self.provider.complete(self.request(), self.emit)
        except ImagesRejected as exc:
            if not self.session.drop_images(IMAGES_REMOVED):
                raise
            cause = str(exc).rstrip(".")
            self.emit(Notice(f"The endpoint does not accept images: {cause}. They were taken out of the conversation."))
            self._streamed = []
            return self.provider.complete(self.request(), self.emit)

    def _conversation_text(self) -> str:
        """What compaction can change of a request, as text: compacting may edit messages in place."""
        return json.dumps([self.session.messages, self.session.hints], sort_keys=True, default=str)

    def _endpoint_notices(self) -> None:
        """What the endpoint said about itself that the human must know (e.g. a window too small), once."""
        for text in self._endpoint().notices:
            self._tell_once(True, text, text)

    def window(self) -> int:
        """The context window: the user's setting, else what the endpoint said (waited for on first use)."""
        return self.settings.context_window or self._endpoint().window or DEFAULT_CONTEXT_WINDOW

    def window_source(self) -> str:
        """Where `window()` comes from, for /context: a proxy's own table can differ from its upstream's."""
        if self.settings.context_window:
            return "your setting (context_window)"
        endpoint = self._endpoint()
        if endpoint.window:
            return f"the endpoint: {endpoint.source or 'its own answer'}"
        return "the default: the endpoint did not say (set context_window if it differs)"

    def output_limit(self) -> int:
        """Output tokens a reply may use. Where prompt and reply share the window (vLLM, llama.cpp, Ollama), a
        quarter of it at most: a server that counts the limit against the window rejects what cannot fit."""
        if self._endpoint().shared:
            return max(1, min(self.settings.max_tokens, self.window() // 4))
        return self.settings.max_tokens

    def input_window(self) -> int:
        """Tokens the prompt may use: the window, less the room a reply needs where they share it."""
        return self.window() - self.output_limit() if self._endpoint().shared else self.window()

    def schema_budget(self) -> int | None:
        """Characters of MCP tool schemas a request may carry before they are found with tool_search instead."""
        share = self.settings.mcp_schema_share
        return None if share >= 1 else int(self.window() * share * CHARS_PER_TOKEN)

    def _endpoint(self) -> Discovery:
        return self.provider.discovery(wait=DISCOVERY_WAIT)

    def tool_ran(self, line: str, risk: str, written: Path | None) -> None:
        self._calls.append(line)
        self.session.record_call(line)
        self.keeper.engine.tool_ran(risk, written)

    def context_size(self) -> int:
        """How many tokens the conversation holds after the last reply, as shown: the endpoint's figure when it
        reported one, else the estimate (a server that left the prompt's count out reports a handful)."""
        usage = self.session.last_usage
        if usage is not None and self.usage_reported:
            return usage.context_tokens
        return self.keeper.measure(self.session)

    def overhead(self) -> int:
        """Tokens of system prompt and tools, counted once per system-prompt change."""
        from mini_agent.context.keeper import overhead_tokens

        system = self._system_blocks()
        if self._overhead is None or self._overhead[0] is not system:
            self._overhead = (system, overhead_tokens(system, self.registry.schemas()))
        return self._overhead[1]

    def _system_blocks(self) -> list[dict]:
        hints = {**self.session.hints, **self.run_hints} if self.run_hints else self.session.hints
        if self._system is None or self._system[0] != hints:
            self._system = (dict(hints), safe(build_system(self.static_prompt, self.registry, hints)))
        return self._system[1]

    def _record(self, reply: Reply, step: int) -> None:
        self.session.record_usage(reply.usage)
        if reply.message["content"]:
            self.session.append(reply.message)
        self.keeper.after_reply(reply.usage if reply.usage_reported else None, self.session)
        self.usage_reported = reply.usage_reported
        unreported = "The endpoint did not say how many tokens the prompt took: the conversation's size is estimated."
        self._tell_once(not reply.usage_reported, "usage", unreported)
        for kind in reply.dropped:
            self._tell_once(
                True,
                f"dropped:{kind}",
                f"The endpoint sent a {kind!r} block, which it would not accept "
                "back in the conversation: it was left out.",
            )
        model = reply.model or self.settings.model
        self.emit(AssistantMessage(reply.message, reply.stop_reason, reply.usage, step, reply.id, model))

    def _tell_once(self, condition: bool, key: str, text: str) -> None:
        """A notice the human needs once per session, not once per reply."""
        if condition and key not in self._told:
            self._told.add(key)
            self.emit(Notice(text))

    def _finish(self, reply: Reply, calls: list[dict], step: int, usage: Usage, cut: int = 0) -> TurnResult:
        """The turn's result; `error` says why a reply that ends it is no answer (also told as a notice)."""
        error = None
        text = self.secrets.mask(text_of(reply.message))
        if cut:
            error = f"{self._cut_text(reply)} Asked {cut} times in a row, the model did not send it whole."
        elif reply.stop_reason == "refusal":
            explanation = (reply.stop_details or {}).get("explanation")
            detail = f": {explanation}" if explanation else "."
            error = f"The model declined to continue (stop reason: refusal){detail}"
        elif reply.stop_reason == "max_tokens":
            error = (
                f"The reply was cut off at the output limit ({self.output_limit()} tokens); "
                "raise --max-tokens or ask the model to continue."
            )
        elif reply.stop_reason == "model_context_window_exceeded":
            error = "The reply was cut off: the conversation filled the model's context window."
        elif not text.strip():
            error = f"The model ended its turn without an answer (an empty reply, stop reason {reply.stop_reason!r})."
        if error is not None:
            self.emit(Notice(error))
        if calls:  # never leave a tool_use without its result: the next request would be rejected
            reason = f"Not run: the reply ended with stop reason {reply.stop_reason!r} before the call was complete."
            self.session.append({"role": "user", "content": [tool_result(c["id"], reason, True) for c in calls]})
        return TurnResult(text, reply.stop_reason, step, usage, error is not None, error=error)

    def _cut_text(self, reply: Reply) -> str:
        if reply.stop_reason == "max_tokens":
            return f"A tool call was cut off at the output limit ({self.output_limit()} tokens)."
        return f"A tool call arrived cut short (its input is not whole JSON; stop reason {reply.stop_reason!r})."

    # ---- what changes during a session: one method each ------------------------------------------------

    @property
    def mode(self) -> str:
        """The permission mode; the REPL changes it between turns (`set_mode`: Shift+Tab, /mode)."""
        return self.gate.mode

    def set_mode(self, mode: str) -> None:
        self.gate.mode = mode
        if self.ctx.review_plan is not None:
            self._plan_hint()

    def _plan_hint(self) -> None:
        from mini_agent.prompt import plan_mode_hint

        self.set_run_hint("plan_mode", plan_mode_hint() if self.mode == "plan" else None)

    def _review_plan(self, plan: str) -> tuple[str, str | None] | None:
        """exit_plan_mode's question; an approved plan switches the mode here, before its work starts."""
        from mini_agent.tools import EXIT_PLAN_MODE

        answer = self.gate.review_plan(self.registry.get(EXIT_PLAN_MODE), plan)
        if answer is not None:
            self.set_mode(answer[0])
        return answer

    def switch_model(self, model: str) -> None:
        """Use `model` from the next request on (/model, a custom command's turn): every holder of the model name
        hears it here. The requests and the sub-agents that inherit it read `settings`; the provider looks up
        the new model's context window; compaction summarises with it (unless compact_model names another); the
        session file records the switch; the REPL's status line prices by it (`ModelSwitched`)."""
        if model == self.settings.model:
            return
        self.settings = replace(self.settings, model=model)
        self.provider.use_model(model)
        self.keeper.use_model(model)
        self.session.record_model(model)
        self.emit(ModelSwitched(model))

    def set_effort(self, level: str) -> None:
        """Think at `level` from the next turn on (/effort); what the endpoint is sent for it: model/thinking.py."""
        self.settings = replace(self.settings, effort=level)

    def start_conversation(self, session: Session) -> None:
        """A new conversation (/clear): `session` replaces the old one, and what belonged to it is forgotten."""
        self._take(session)
        self.forget()

    def continue_conversation(
        self, session: Session, ledger: Ledger, calls: list[str], anchor: tuple[Usage, int] | None
    ) -> None:
        """A stored conversation continued (--continue, --resume, /resume): its transcript, the context blocks
        it has seen, its recent calls and the size its last reply measured."""
        self._take(session)
        self.keeper.resume(ledger, anchor)
        self.remember_calls(calls)

    def _take(self, session: Session) -> None:
        """`session` is the conversation from now on; its usage is counted by this agent's model, and a stored
        one continued with another model records the switch."""
        if session.model and session.model != self.settings.model:
            session.record_model(self.settings.model)
        session.model = self.settings.model
        self.session = session

    def set_run_hint(self, key: str, text: str | None) -> None:
        """A run hint set (None: removed). Copied, not changed in place: a request may be reading them."""
        hints = {name: value for name, value in self.run_hints.items() if name != key}
        self.run_hints = hints if text is None else {**hints, key: text}

    def _job_endings(self) -> list[str]:
        """Background jobs that ended since the model last heard of them: a note for the model, a notice for the
        human."""
        if self.ctx.jobs is None:
            return []
        from mini_agent.tools.jobs import ending

        notes = []
        for job in self.ctx.jobs.take_endings():
            text = self.secrets.mask(ending(job))
            self.emit(Notice(text))
            notes.append(system_hint("job", text, job=job.id))
        return notes

    def tell_next_turn(self, *notes: str) -> None:
        """System hints the model hears at the start of the next turn (the user undid its changes)."""
        self.notes = [*self.notes, *notes]

    def add_delegated(self, usage: Usage) -> None:
        """Tokens a sub-agent used during this turn: they count in the turn's usage."""
        self.delegated = self.delegated + usage
