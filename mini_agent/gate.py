"""The permission gate between the model's tool calls and the tools: the policy first, a human when it asks
(a PermissionRequest hook may answer the question first: only a question, and only an ordinary one).

The gate holds what may change during a session: the permission mode (Shift+Tab, /mode) and the rules, to
which "always" answers add. It also vets web_fetch's destinations once their addresses are known, turns any
call that would send a known secret out into a question (safety/egress.py), in every mode but bypass, and puts
a plan to the human (exit_plan_mode).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from mini_agent.hooks import NO_HOOKS, Hooks
from mini_agent.safety.denials import Denial, denial, hook_denial
from mini_agent.safety.egress import guard, secret_paths
from mini_agent.safety.permissions import Allow, Ask, Decision, Deny, ToolCall, Verdict, check, check_destination
from mini_agent.safety.preview import change_preview
from mini_agent.safety.rules import Rules
from mini_agent.safety.workspace import Workspace, within
from mini_agent.settings import Settings
from mini_agent.tools import WEB_FETCH
from mini_agent.tools.base import Tool, ToolContext, ToolError, ToolInterrupted


@dataclass(frozen=True)
class ApprovalRequest:
    """A tool call the policy wants a human to approve."""

    tool: Tool
    arguments: dict
    ask: Ask
    """Why the policy asks, how risky the call is, and the "always" answers on offer."""
    preview: str | None
    """For writes and edits: the change as a unified diff."""
    plan: str | None = None
    """A plan the model asks to carry out (exit_plan_mode), shown as Markdown: a yes says in which mode."""

    @property
    def reason(self) -> str:
        return self.ask.reason


Confirm = Callable[[ApprovalRequest], Decision]
HOOK_ANSWERS = ("read-only", "ordinary")
"""The questions a PermissionRequest hook's "allow" answers: as far as auto mode reaches. A sensitive one (a secret
leaving, a credential read, a write to a protected place, a private address, a command outside the sandbox) or a
destructive one stays the human's; a hook's "deny" answers any."""


def attended(confirm: Confirm) -> bool:
    """Whether `confirm` puts questions to a human (a run nobody watches marks its refusing confirm
    `attended = False`): only then do PermissionRequest and Notification hooks run."""
    return getattr(confirm, "attended", True)


class Gate:
    def __init__(
        self,
        settings: Settings,
        ctx: ToolContext,
        confirm: Confirm,
        tool: Callable[[str], Tool | None],
        notify: Callable[[str], None] | None = None,
        hooks: Hooks = NO_HOOKS,
    ):
        """`tool` looks a tool up by name (the registry's get); `notify` tells the human something once; `hooks`
        (the agent's) may answer a question before the human sees it."""
        self.settings, self.ctx, self.confirm, self._tool = settings, ctx, confirm, tool
        self.hooks = hooks
        self.attended = attended(confirm)
        self._notify = notify
        self._told_no_sandbox = False
        self.started = time.time()
        """When the session began: a script changed since then is the agent's work, judged by its content."""
        self.mode = settings.permission_mode
        """The permission mode; the REPL may change it between turns."""
        self.rules = settings.rules
        """The configured rules plus what the human granted with "always" answers in this session."""
        self._workspace: Workspace | None = None
        self.secrets = ctx.secrets if ctx.secrets is not None else settings.secret_set
        self._denials: list[Denial] = []
        self._answered: tuple[str, str] | None = None
        """(host, risk) of the web_fetch call being run, whose host's risk the human just said yes to: its
        connection to an address of that risk is covered by that answer (one question, not two)."""

    def take_permissions(self, other: Gate) -> None:
        """A sub-agent's gate: never wider than its parent's, so its mode, its rules ("always" answers included)
        and when its session began, as they are now; it asks whom the parent asks."""
        self.mode, self.rules, self.started = other.mode, other.rules, other.started
        self.attended = other.attended

    @contextmanager
    def also_allowing(self, rules: Rules) -> Iterator[None]:
        """`rules` join the gate's for a while (a custom command's turn), then go; what the human granted in the
        meantime ("always" answers) stays."""
        added = tuple(rule for rule in rules.rules if rule not in self.rules.rules)
        self.rules = self.rules.with_rules(*added)
        try:
            yield
        finally:
            self.rules = Rules(tuple(rule for rule in self.rules.rules if rule not in added))

    def authorise(self, tool: Tool, arguments: dict) -> Verdict:
        """Allow or Deny one validated call, asking the human when the policy says so.

        A call the policy would put to a human but that cannot succeed (an edit of a file not read, an old_string
        not found) is denied with the very error running it would give, and nobody is asked.
        """
        self._answered = None
        sandboxed = tool.risk == "exec" and self._sandboxed()
        judged_name, judged_risk, judged = tool.judged(arguments)
        call = ToolCall(judged_name, judged_risk, judged)
        workspace = self.workspace()
        text = arguments.get("path")
        if tool.risk in ("read", "write") and isinstance(text, str):  # a file tool: it opens what is judged here
            resolved = workspace.resolve(text)
            workspace = replace(workspace, pins=((text, resolved),))
            self.ctx.pin(text, resolved)
        served = None
        if tool.name == WEB_FETCH and self.ctx.jobs is not None:
            from mini_agent.tools.jobs import describe, serving

            job = serving(self.ctx, str(arguments.get("url", "")))
            served = describe(job) if job is not None else None
        verdict = check(call, self.mode, self.rules, workspace, sandboxed=sandboxed, served=served)
        if tool.key_argument == "command":  # secret files a command names (`cat api/.env`): their values get masked too
            for path in secret_paths(str(arguments.get("command", ""))):
                self.secrets.harvest(self.workspace().resolve(path), path)
        if self.mode != "bypass":  # nothing secret leaves without a yes, whatever the rules allow
            self.secrets.refresh()
            verdict = guard(verdict, judged_name, judged, self.secrets)
        asked = verdict if isinstance(verdict, Ask) else None
        if asked is not None:
            failure = doomed(tool, arguments, self.ctx)
            if failure is not None:  # nobody is asked to approve a call that cannot succeed
                return Deny(failure)
            preview = change_preview(arguments, self.ctx.cwd) if tool.edits_files else None
            # The question shows which secret (by name) but never its value: the screen is an output too.
            shown = self.secrets.mask_value(arguments)
            request = ApprovalRequest(tool, shown, asked, preview and self.secrets.mask(preview))
            verdict = self._question(request, arguments, sandboxed)
            if tool.name == WEB_FETCH and isinstance(verdict, Allow):
                self._answered = destination_answered(str(arguments.get("url", "")), asked)
        if isinstance(verdict, Deny):
            self._refused(tool.name, verdict, asked)
        return verdict

    def _question(self, request: ApprovalRequest, arguments: dict, sandboxed: bool = False) -> Decision:
        """A question for the human: when one will see it, PermissionRequest hooks may answer first (their
        "allow" only within `HOOK_ANSWERS`), then Notification hooks hear the agent waits, then the human."""
        if not self.attended:
            return self.decide(request)
        if self.hooks.has("PermissionRequest"):
            ask = request.ask
            offered = [_suggestion(grant.rules) for grant in ask.grants]
            answer = self.hooks.permission_request(request.tool, arguments, ask.reason, ask.risk, offered)
            if answer is not None and not answer.allow:
                message = f"Not run: a PermissionRequest hook refused it: {answer.message}"
                self._denials.append(hook_denial(self.secrets.mask(message), "PermissionRequest"))
                return Deny(message, rule=HOOK_REFUSAL)
            if answer is not None and ask.risk in HOOK_ANSWERS:
                return Allow("a PermissionRequest hook allowed it", sandbox="workspace-write" if sandboxed else "none")
            if answer is not None and self._notify is not None:
                self._notify(f"A PermissionRequest hook allowed this {ask.risk} call: that is yours to answer.")
        self.hooks.notify("permission_prompt", f"mini-agent needs your permission to use {request.tool.name}")
        return self.decide(request)

    def _refused(self, tool: str, refusal: Deny, asked: Ask | None) -> None:
        if refusal.rule == HOOK_REFUSAL:
            return  # recorded as the hook's (`_question`)
        record = denial(tool, refusal, asked, self.mode)
        mask = self.secrets.mask  # a refusal may quote the call
        self._denials.append(Denial(record.kind, mask(record.reason), record.allow, record.rule, mask(record.message)))

    def take_denials(self) -> list[Denial]:
        """The refusals since the last call, oldest first; the caller ties them to the tool call being run."""
        taken, self._denials = self._denials, []
        return taken

    def workspace(self) -> Workspace:
        """The working directory as the policy sees it, from where the shell is now."""
        cwd = Path(os.path.realpath(self.ctx.cwd))
        if self._workspace is None or self._workspace.cwd != cwd:
            root = self._workspace.root if self._workspace else None
            # The user and data directories too: commands there vouch like the user's config, and trust.json
            # says what of a project the human trusted, which only the human may add to.
            # (Not a directory holding the project: then everything would be protected.)
            root = root or Path(os.path.realpath(self.settings.cwd))
            dirs = [Path(os.path.realpath(d)) for d in (self.settings.user_dir, self.settings.data_dir)]
            own = (*self.settings.config_files, *(d for d in dirs if not within(root, d)))
            self._workspace = Workspace.at(
                root, cwd, own, session_started=self.started, private=self.settings.private_dirs
            )
        return self._workspace

    def _sandboxed(self) -> bool:
        """Whether shell commands can be confined here; the first time they cannot, the human hears why."""
        if self.sandbox() is not None:
            return True
        if not self._told_no_sandbox and self._notify is not None and self.mode != "bypass":
            from mini_agent.safety.sandbox import unavailable_reason

            self._notify(
                f"No OS sandbox on this machine ({unavailable_reason()}): read-only commands run unconfined and "
                "auto mode asks before the others. See `mini-agent sandbox`."
            )
            self._told_no_sandbox = True
        return False

    def sandbox(self):
        """The OS sandbox this machine offers (a `sandbox.Mechanism`), or None; probed once per process."""
        from mini_agent.safety.sandbox import mechanism

        return mechanism()

    def confinement(self, allowed: Allow):
        """What an allowed shell command is confined to (a `sandbox.Confinement`), or None to run it outside."""
        if allowed.sandbox == "none":
            return None
        from mini_agent.safety.sandbox import Confinement

        return Confinement.for_agent(allowed.sandbox, self.workspace().root, self.settings, allowed.network)

    def decide(self, request: ApprovalRequest) -> Decision:
        """Ask the human; an "always" answer adds its rules for the rest of the session."""
        decision = self.confirm(request)
        if isinstance(decision, Allow) and decision.remember:
            self.rules = self.rules.with_rules(*decision.remember)
        return decision

    def review_plan(self, tool: Tool, plan: str) -> tuple[str, str | None] | None:
        """The plan put to the human: the mode they approved it in (not yet in force) and their edited version of
        it if they edited it, or None when nobody could be asked. Raises ToolError with their words when they keep
        planning, KeyboardInterrupt on Ctrl-C."""
        if not self.attended:
            return None
        shown = self.secrets.mask(plan)
        ask = Ask("the plan needs your approval before anything changes")
        self.hooks.notify("permission_prompt", "mini-agent has a plan for your approval")  # no hook answers it
        decision = self.decide(ApprovalRequest(tool, {"plan": shown}, ask, None, plan=shown))
        if isinstance(decision, Allow):
            return decision.mode or "default", decision.plan
        if decision.stop_turn:
            raise ToolInterrupted(told=decision.message)
        raise ToolError(decision.message)

    def check_destination(self, url: str, host: str, reason: str) -> None:
        """web_fetch is about to connect to a private, loopback or metadata address: the policy, then a human.

        Returns to allow; raises ToolError to refuse, KeyboardInterrupt when the human pressed Ctrl-C.
        """
        if self._answered is not None and covered(self._answered, host, reason):
            return
        verdict = check_destination(host, reason, self.mode, self.rules)
        asked = verdict if isinstance(verdict, Ask) else None
        if asked is not None:
            verdict = self._question(ApprovalRequest(self._tool(WEB_FETCH), {"url": url}, asked, None), {"url": url})
        if isinstance(verdict, Deny):
            self._refused(WEB_FETCH, verdict, asked)
            if verdict.stop_turn:
                raise KeyboardInterrupt
            raise ToolError(verdict.message)


HOOK_REFUSAL = "(a PermissionRequest hook)"
"""The `rule` of a refusal a hook gave: its record is the hook's, not a question's."""


def _suggestion(rules: tuple) -> dict:
    """An "always" answer on offer, as Claude Code's `permission_suggestions` entries are written."""
    written = [{"toolName": rule.tool, "ruleContent": rule.pattern} for rule in rules]
    return {"type": "addRules", "rules": written, "behavior": "allow", "destination": "session"}


def destination_answered(url: str, asked: Ask) -> tuple[str, str] | None:
    """(host, risk) when the question the human said yes to was the policy's about the URL's host being
    loopback, private or metadata (`localhost is a loopback address`); None for any other question."""
    from urllib.parse import urlsplit

    from mini_agent.safety.netaddr import host_risk

    try:
        host = (urlsplit(url.strip()).hostname or "").lower().rstrip(".")
    except ValueError:
        return None
    risk = host_risk(host) if host else None
    return (host, risk) if risk is not None and asked.reason == f"{host} is {risk}" else None


def covered(answered: tuple[str, str], host: str, reason: str) -> bool:
    """Whether a connect-time check is the one the human already answered: the same host, at an address of the
    risk they were told of. Another host (a redirect) or another kind of address (a name shown as loopback
    resolving to a private address) is asked about."""
    name, risk = answered
    return host.lower().rstrip(".") == name and reason.endswith(risk)


def doomed(tool: Tool, arguments: dict, ctx: ToolContext) -> str | None:
    """The error running this validated call would certainly give (the same text), or None."""
    if tool.precheck is None:
        return None
    try:
        tool.precheck(ctx, **arguments)
    except ToolError as exc:
        return str(exc)
    except Exception:  # a check that breaks must not stop the call: running it reports the problem
        return None
    return None
