"""Who may run what: one tool call, the mode, the rules and the workspace in; Allow, Deny or Ask out.

Order of precedence: a deny rule refuses (in every mode, bypass included); an ask rule asks; calls that are
risky in themselves (destructive commands, writes outside the working directory or to protected places,
fetches from private addresses) ask in every mode but bypass unless a rule from the user's own config, a
flag or an answer in this session names them; then allow rules; then the mode's defaults. Every decision
carries a reason a human can read.

A shell command that runs without a human's yes runs in the OS sandbox (`Allow.sandbox`): read-only commands
(in every mode) in the read-only one, everything else the policy lets through on its own (auto mode, wildcard
rules) in the workspace-write one. Only a human's yes, an exact rule of the user's or bypass mode runs a command
outside; the model asking for that (`outside_sandbox`) always asks a human.

Asking is the UI's job (ui/confirm.py); when nobody can be asked, the caller turns Ask into
`refusal_without_human`. Pure code: it resolves paths (symlinks) and looks whether a file to write exists
("creates" or "changes"), nothing more.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from urllib.parse import urlsplit

from mini_agent.safety.command_policy import NO_SANDBOX_ASKS, check_command, outside_sandbox
from mini_agent.safety.decisions import (
    PLAN_REFUSAL,
    SESSION,
    Allow,
    Ask,
    Decision,
    Deny,
    Grant,
    Mode,
    RiskLevel,
    Sandbox,
    ToolCall,
    Verdict,
    first,
    session_rule,
    vouches,
)
from mini_agent.safety.mcp_policy import check_mcp, is_mcp
from mini_agent.safety.refusals import plan_refusal, refusal_without_human
from mini_agent.safety.rules import (
    BASH,
    EDIT_FILE,
    EXIT_PLAN_MODE,
    FILE_TOOLS,
    READ_FILE,
    WEB_FETCH,
    WRITE_FILE,
    Rule,
    Rules,
)
from mini_agent.safety.workspace import Workspace

__all__ = [
    "NO_SANDBOX_ASKS",
    "PLAN_REFUSAL",
    "SESSION",
    "Allow",
    "Ask",
    "Decision",
    "Deny",
    "Grant",
    "Mode",
    "RiskLevel",
    "Sandbox",
    "ToolCall",
    "Verdict",
    "check",
    "check_destination",
    "refusal_without_human",
]


def check(
    call: ToolCall, mode: Mode, rules: Rules, workspace: Workspace, sandboxed: bool = True, served: str | None = None
) -> Verdict:
    """The policy for one tool call. `sandboxed`: this machine has an OS sandbox to run commands in. `served`: a
    web_fetch of loopback goes where a background job of the session alone listens (that job, described)."""
    if call.name == BASH:
        command = str(call.arguments.get("command", ""))
        verdict = check_command(command, mode, rules, workspace, sandboxed)
        if call.arguments.get("outside_sandbox") and isinstance(verdict, Allow) and verdict.sandbox != "none":
            return outside_sandbox(command, verdict, workspace)
        return verdict
    if call.name in FILE_TOOLS:
        return _check_file(call, mode, rules, workspace)
    if call.name == WEB_FETCH:
        return _check_fetch(str(call.arguments.get("url", "")), mode, rules, served)
    if is_mcp(call.name):
        return check_mcp(call, mode, rules)
    if call.name == EXIT_PLAN_MODE:
        return _check_plan_exit(mode, rules)
    for effect in ("deny", "ask"):  # a tool whose rules take no pattern (job_output, stop_job)
        named = first(rules.of(effect, call.name), lambda rule: rule.pattern is None)
        if named and effect == "deny":
            return Deny(f"Not run: {call.name} is denied by the rule {named}.", rule=str(named))
        if named and mode != "bypass":
            return Ask(f"the rule {named} asks first")
    if call.risk == "read" or mode == "bypass":
        return Allow(f"{call.name} only reads" if call.risk == "read" else "bypass mode runs everything")
    if mode == "plan":
        return plan_refusal(call.name, what=f"{call.name} has side effects")
    if call.risk == "write":
        return Allow(f"{mode} mode") if mode in ("accept-edits", "auto") else Ask("changes a file")
    return Allow("auto mode") if mode == "auto" else Ask(f"{call.name} has side effects")


def _check_plan_exit(mode: Mode, rules: Rules) -> Verdict:
    """A plan put to the human: the tool asks them itself (gate.review_plan), so no rule can approve a plan in their
    place; a deny rule keeps the model planning, and outside plan mode there is nothing to approve."""
    denied = first(rules.of("deny", EXIT_PLAN_MODE), lambda rule: True)
    if denied:
        return Deny(
            f"Not run: {EXIT_PLAN_MODE} is denied by the rule {denied}: the plan cannot be put to the user for "
            "approval. Present it in your reply instead; the user switches modes when they agree.",
            rule=str(denied),
        )
    if mode != "plan":
        return Deny(
            f"Not run: {EXIT_PLAN_MODE} only ends plan mode, and the session is in {mode} mode, not "
            "planning: there is no plan to approve. Carry on with the task."
        )
    return Allow("the plan goes to the user for approval")


def check_destination(host: str, reason: str, mode: Mode, rules: Rules) -> Verdict:
    """A fetch about to connect to a private, loopback or metadata address (known only after DNS)."""
    host = host.lower().rstrip(".")
    denied = first(rules.of("deny", WEB_FETCH), lambda rule: rule.matches_url("", host))
    if denied and denied.pattern is not None:
        return Deny(f"Not fetched: {host} is denied by the rule {denied}.", rule=str(denied))
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    granted = first(rules.of("allow", WEB_FETCH), lambda rule: vouches(rule) and rule.matches_url("", host))
    if granted:
        return Allow(f"allowed by {granted}")
    return Ask(
        reason, "sensitive", (Grant("h", f"always allow fetching from {host}", (session_rule(WEB_FETCH, host),)),)
    )


# ---- files --------------------------------------------------------------------------------------------------


def _check_file(call: ToolCall, mode: Mode, rules: Rules, workspace: Workspace) -> Verdict:
    path = workspace.resolve(str(call.arguments.get("path", "")))
    shown = workspace.shown(path)

    def matches(rule: Rule) -> bool:
        return rule.matches_path(call.name, path, workspace.root, workspace.home)

    denied = first(rules.of("deny", call.name), matches)
    if denied:
        return Deny(f"Not run: {call.name} on {shown} is denied by the rule {denied}.", rule=str(denied))
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    reading = call.name == READ_FILE
    grant = (
        Grant("e", f"always allow reading {shown}", (session_rule(READ_FILE, str(path)),))
        if reading
        else Grant(
            "e",
            f"always allow edits to {shown}",
            (session_rule(EDIT_FILE, str(path)), session_rule(WRITE_FILE, str(path))),
        )
    )
    asked = first(rules.of("ask", call.name), matches)
    if asked:
        return Ask(f"the rule {asked} asks first", "ordinary", (grant,))
    vouched = first(rules.of("allow", call.name), lambda rule: vouches(rule) and matches(rule))
    if reading:
        secret = workspace.secret(path)
        if secret is None:
            return Allow("reading files is always allowed")
        # The project's own secrets may be read in auto mode (their values join the session's known secrets and
        # are masked); credentials elsewhere (~/.ssh, ~/.aws, another project's .env) always need a yes.
        own = path.is_relative_to(workspace.root) and workspace.protected(path) is None
        if vouched or (mode == "auto" and own):
            return Allow(f"allowed by {vouched}" if vouched else f"auto mode reads the project's secrets ({secret})")
        where = "" if path.is_relative_to(workspace.root) else ", outside the project"
        return Ask(f"reads {shown}{where}: {secret}", "sensitive", (grant,))
    where = workspace.where(path)
    if mode == "plan":
        return plan_refusal(call.name, what=f"this would {'change' if os.path.lexists(path) else 'create'} {shown}")
    if where:
        if vouched:
            return Allow(f"allowed by {vouched}")
        return Ask(f"writes outside the routine places: {where}", "sensitive", (grant,))
    allowed = first(rules.of("allow", call.name), matches)
    if allowed:
        return Allow(f"allowed by {allowed}")
    links = _hard_links(path)
    if links > 1:  # the inode may also be ~/.bashrc or a pnpm store's copy: no routine write, the human decides
        return Ask(
            f"{shown} has {links} hard links: the same file also has other names, maybe outside the project (a pnpm "
            "store links packages into node_modules this way). The write replaces this name only; the other names "
            "keep the old content",
            "ordinary",
            (grant,),
        )
    if mode in ("accept-edits", "auto"):
        return Allow(f"{mode} mode changes files inside the working directory")
    return Ask(f"{'changes' if os.path.lexists(path) else 'creates'} {shown}", "ordinary", (grant,))


def _hard_links(path: Path) -> int:
    """How many names the regular file at the resolved `path` has (0 when there is none)."""
    try:
        info = os.stat(path, follow_symlinks=False)
    except OSError:
        return 0
    return info.st_nlink if stat.S_ISREG(info.st_mode) else 0


# ---- network ------------------------------------------------------------------------------------------------


def _check_fetch(url: str, mode: Mode, rules: Rules, served: str | None = None) -> Verdict:
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return Allow("the tool reports the malformed URL itself")
    if parts.scheme.lower() not in ("http", "https") and url.strip().lower().startswith(f"{parts.scheme.lower()}:/"):
        return Deny(f"Not run: web_fetch only fetches http:// and https:// URLs, not '{parts.scheme}:'.")

    def matches(rule: Rule) -> bool:
        return rule.matches_url(url, host)

    denied = first(rules.of("deny", WEB_FETCH), matches)
    if denied:
        return Deny(f"Not fetched: {url} is denied by the rule {denied}.", rule=str(denied))
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    grant = Grant("h", f"always allow fetching from {host}", (session_rule(WEB_FETCH, host),))
    asked = first(rules.of("ask", WEB_FETCH), matches)
    if asked:
        return Ask(f"the rule {asked} asks first", "ordinary", (grant,))
    from mini_agent.safety.netaddr import LOOPBACK, host_risk

    risk = host_risk(host) if host else None
    if risk == LOOPBACK and served:  # judged like a public page; no "always": the port may change hands
        allowed = first(rules.of("allow", WEB_FETCH), matches)
        if allowed:
            return Allow(f"allowed by {allowed}")
        return Allow(f"auto mode fetches from {served}") if mode == "auto" else Ask(f"fetches from {served}")
    if risk:
        vouched = first(rules.of("allow", WEB_FETCH), lambda rule: vouches(rule) and matches(rule))
        if vouched:
            return Allow(f"allowed by {vouched}")
        return Ask(f"{host} is {risk}", "sensitive", (grant,))
    allowed = first(rules.of("allow", WEB_FETCH), matches)
    if allowed:
        return Allow(f"allowed by {allowed}")
    if mode == "auto":
        return Allow("auto mode fetches public URLs")
    return Ask(f"fetches {host or url} from the network", "ordinary", (grant,))
