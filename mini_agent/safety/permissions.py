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
`refusal_without_human`. Pure code: it resolves paths (symlinks), nothing more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from mini_agent.safety.rules import FILE_TOOLS, Origin, Rule, Rules
from mini_agent.safety.workspace import Workspace, secret_reason

Mode = Literal["default", "accept-edits", "auto", "plan", "bypass"]
RiskLevel = Literal["read-only", "ordinary", "sensitive", "destructive"]
Sandbox = Literal["read-only", "workspace-write", "none"]
SESSION = Origin("session", "(your answer)")
PLAN_REFUSAL = (
    "Plan mode is read-only, so {tool} was not run{why}. Investigate with read_file and read-only shell commands "
    "and present a plan; the user can switch to --permission-mode default, accept-edits or auto to make changes."
)
NO_SANDBOX_ASKS = (
    "this machine has no OS sandbox to run it in, so auto mode asks before commands that are not read-only"
)
# Tools whose second word names what they do: `git commit *` is a useful prefix, `git *` is not.
TWO_WORD_COMMANDS = frozenset(
    "git npm pnpm yarn bun cargo go docker podman kubectl helm pip pip3 uv poetry make gh brew apt conda "
    "dotnet mvn gradle terraform rustup npx".split()
)


@dataclass(frozen=True)
class ToolCall:
    name: str
    risk: str
    """The tool's kind: read, write, exec or network."""
    arguments: dict


@dataclass(frozen=True)
class Allow:
    reason: str = ""
    remember: tuple[Rule, ...] = ()
    """Rules the human granted with their answer, in force for the rest of the session."""
    sandbox: Sandbox = "none"
    """Where a shell command runs: in the read-only or the workspace-write OS sandbox, or outside any sandbox
    ("none": a human's yes, an exact rule of the user's, bypass mode, or no sandbox on this machine)."""
    network: bool = False
    """Inside the sandbox, the network is open: an allow rule of the user's own names the command."""


@dataclass(frozen=True)
class Deny:
    message: str
    """Sent to the model as the tool_result, so it can adapt."""
    stop_turn: bool = False
    """End the turn instead of letting the model carry on (the human pressed Ctrl-C at the question)."""


@dataclass(frozen=True)
class Grant:
    """An "always" answer the human may give: the rules it adds for the rest of the session."""

    key: str
    label: str
    rules: tuple[Rule, ...]


@dataclass(frozen=True)
class Ask:
    reason: str
    risk: RiskLevel = "ordinary"
    grants: tuple[Grant, ...] = ()
    """The "always" answers on offer; the first one's rules are what a refusal suggests as --allow."""
    classification: str | None = None
    """For bash: the command's class and why, shown beside the question."""


Decision = Allow | Deny
Verdict = Allow | Deny | Ask


def check(call: ToolCall, mode: Mode, rules: Rules, workspace: Workspace, sandboxed: bool = True) -> Verdict:
    """The policy for one tool call. `sandboxed`: this machine has an OS sandbox to run commands in."""
    if call.name == "bash":
        command = str(call.arguments.get("command", ""))
        verdict = _check_command(command, mode, rules, workspace, sandboxed)
        if call.arguments.get("outside_sandbox") and isinstance(verdict, Allow) and verdict.sandbox != "none":
            return _outside_sandbox(command, verdict, workspace)
        return verdict
    if call.name in FILE_TOOLS:
        return _check_file(call, mode, rules, workspace)
    if call.name == "web_fetch":
        return _check_fetch(str(call.arguments.get("url", "")), mode, rules)
    if call.risk == "read" or mode == "bypass":
        return Allow(f"{call.name} only reads" if call.risk == "read" else "bypass mode runs everything")
    if mode == "plan":
        return Deny(PLAN_REFUSAL.format(tool=call.name, why=""))
    if call.risk == "write":
        return Allow(f"{mode} mode") if mode in ("accept-edits", "auto") else Ask("changes a file")
    return Allow("auto mode") if mode == "auto" else Ask(f"{call.name} has side effects")


def check_destination(host: str, reason: str, mode: Mode, rules: Rules) -> Verdict:
    """A fetch about to connect to a private, loopback or metadata address (known only after DNS)."""
    host = host.lower().rstrip(".")
    denied = _first(rules.of("deny", "web_fetch"), lambda rule: rule.matches_url("", host))
    if denied and denied.pattern is not None:
        return Deny(f"Not fetched: {host} is denied by the rule {denied}.")
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    granted = _first(rules.of("allow", "web_fetch"), lambda rule: _vouches(rule) and rule.matches_url("", host))
    if granted:
        return Allow(f"allowed by {granted}")
    return Ask(reason, "sensitive", (Grant("h", f"always allow fetching from {host}", (_rule("web_fetch", host),)),))


def refusal_without_human(tool: str, ask: Ask) -> Deny:
    """Ask turned into Deny when nobody can answer: say why, and which flag or rule would allow it."""
    rules = ask.grants[0].rules if ask.grants else ()
    allow = " ".join(f"--allow '{rule.text}'" for rule in rules)
    if ask.risk == "destructive":
        how = (
            "Destructive commands never run without a human's yes: the user can approve it in an interactive "
            f"session{f', or allow exactly this command with {allow}' if allow else ''}."
        )
    else:
        ways = [allow] if allow else []
        if ask.risk == "ordinary":
            mode = "accept-edits" if tool in ("write_file", "edit_file") else "auto"
            ways.append(f"--permission-mode {mode}")
        how = (
            f"To allow it, the user can rerun with {' or '.join(ways)}, or add the rule to the permissions of "
            "their config file."
            if ways
            else "It needs a human's yes."
        )
    return Deny(f"Not run: {tool} needs approval ({ask.reason}) and this run cannot ask anyone. {how}")


# ---- bash ---------------------------------------------------------------------------------------------------


def _check_command(command: str, mode: Mode, rules: Rules, workspace: Workspace, sandboxed: bool) -> Verdict:
    from mini_agent.safety.shell import classify

    verdict = classify(command, workspace)
    forms = {form for part in verdict.parts for form in (part.text, *part.forms)} | {command.strip()}
    denied = _first(rules.of("deny", "bash"), lambda rule: any(rule.matches_command(form) for form in forms))
    if denied:
        return Deny(f"Not run: the command is denied by the rule {denied}.")
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    label = verdict.reason if verdict.reason.startswith(verdict.kind) else f"{verdict.kind}: {verdict.reason}"
    asked = _first(rules.of("ask", "bash"), lambda rule: any(rule.matches_command(form) for form in forms))
    risky = [part for part in verdict.parts if part.kind != "read-only"]
    if not risky and verdict.kind != "read-only":
        risky = [_whole(command, verdict)]
    if asked:
        return Ask(f"the rule {asked} asks first", _level(verdict.kind), _command_grants(risky), label)
    allows = rules.of("allow", "bash")
    # The network opens inside the sandbox only for what the user's own rules name: a project file's rule is
    # the repository speaking, and a repository must not open a way out for its own commands.
    network = any(_vouches(rule) for rule in _rules_for(verdict.parts, allows))
    if verdict.kind == "read-only":
        return Allow(label, sandbox="read-only" if sandboxed else "none", network=network)
    if mode == "plan":
        return Deny(PLAN_REFUSAL.format(tool="the command", why=f" ({label})"))
    uncovered = [part for part in risky if not _covered(part, allows)]
    if not uncovered:
        covering = [_covering(part, allows) for part in risky]
        reason = "allowed by " + "; ".join(sorted({str(rule) for rule in covering}))
        if all(rule is not None and _vouches(rule) and rule.exact for rule in covering):
            return Allow(reason)  # the user named exactly this command: it runs as they would run it
        return Allow(reason, sandbox=_confined(sandboxed), network=network)
    destructive = [part for part in uncovered if part.kind == "destructive"]
    if destructive:
        reason = destructive[0].reason
        return Ask(f"destructive: {reason}", "destructive", _command_grants(destructive), label)
    if mode == "auto":
        if not sandboxed:
            return Ask(NO_SANDBOX_ASKS, "ordinary", _command_grants(uncovered), label)
        return Allow(f"auto mode runs commands that are not destructive ({label})", sandbox="workspace-write")
    return Ask(uncovered[0].reason, "ordinary", _command_grants(uncovered), label)


def _outside_sandbox(command: str, allowed: Allow, workspace: Workspace) -> Verdict:
    """The model asked to run a command outside the sandbox: that is a human's decision, in every mode."""
    from mini_agent.safety.shell import classify

    parts = [part for part in classify(command, workspace).parts if part.text.strip()] or [
        _whole(command, classify(command, workspace))
    ]
    grants = tuple(grant for grant in _command_grants(parts) if grant.key == "a")
    return Ask(
        "runs outside the sandbox: it may write anywhere you can and reach the network",
        "sensitive",
        grants,
        allowed.reason,
    )


def _confined(sandboxed: bool) -> Sandbox:
    return "workspace-write" if sandboxed else "none"


def _rules_for(parts, allows: tuple[Rule, ...]) -> list[Rule]:
    return [rule for part in parts if (rule := _covering(part, allows)) is not None]


def _covering(part, allows: tuple[Rule, ...]) -> Rule | None:
    if part.kind == "destructive":  # only a trusted rule naming exactly this command, as written
        return _first(allows, lambda rule: _vouches(rule) and rule.exact and rule.matches_command(part.text))
    return _first(allows, lambda rule: any(rule.matches_command(form) for form in (part.text, *part.forms)))


def _covered(part, allows: tuple[Rule, ...]) -> bool:
    return _covering(part, allows) is not None


def _command_grants(parts) -> tuple[Grant, ...]:
    exact = tuple(dict.fromkeys(_rule("bash", part.text) for part in parts if part.text.strip()))
    grants = []
    if exact and all(rule.exact for rule in exact):
        label = f"always allow `{exact[0].pattern}`" if len(exact) == 1 else "always allow these exact commands"
        grants.append(Grant("a", label, exact))
    if all(part.kind != "destructive" for part in parts):
        prefixes = tuple(dict.fromkeys(_rule("bash", f"{_prefix(part.text)} *") for part in parts))
        if prefixes and prefixes != exact:
            shown = ", ".join(f"`{rule.pattern}`" for rule in prefixes)
            grants.append(Grant("p", f"always allow {shown}", prefixes))
    return tuple(grants)


def _prefix(text: str) -> str:
    words = text.split()
    if len(words) > 1 and words[0] in TWO_WORD_COMMANDS and not words[1].startswith("-"):
        return " ".join(words[:2])
    return words[0] if words else text


def _whole(command: str, verdict):
    """The command as one part, for a verdict whose risk was not tied to a part (e.g. it did not parse)."""
    from mini_agent.safety.shell import Part

    return Part(" ".join(command.split()), verdict.kind, verdict.reason, ())


def _level(kind: str) -> RiskLevel:
    return "destructive" if kind == "destructive" else "ordinary"


# ---- files --------------------------------------------------------------------------------------------------


def _check_file(call: ToolCall, mode: Mode, rules: Rules, workspace: Workspace) -> Verdict:
    path = workspace.resolve(str(call.arguments.get("path", "")))
    shown = workspace.shown(path)

    def matches(rule: Rule) -> bool:
        return rule.matches_path(call.name, path, workspace.root, workspace.home)

    denied = _first(rules.of("deny", call.name), matches)
    if denied:
        return Deny(f"Not run: {call.name} on {shown} is denied by the rule {denied}.")
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    reading = call.name == "read_file"
    grant = (
        Grant("e", f"always allow reading {shown}", (_rule("read_file", str(path)),))
        if reading
        else Grant(
            "e",
            f"always allow edits to {shown}",
            (_rule("edit_file", str(path)), _rule("write_file", str(path))),
        )
    )
    asked = _first(rules.of("ask", call.name), matches)
    if asked:
        return Ask(f"the rule {asked} asks first", "ordinary", (grant,))
    vouched = _first(rules.of("allow", call.name), lambda rule: _vouches(rule) and matches(rule))
    if reading:
        secret = secret_reason(path)
        if secret is None:
            return Allow("reading files is always allowed")
        # The project's own secrets may be read in auto mode (their values join the session's known secrets and
        # are masked); credentials elsewhere (~/.ssh, ~/.aws, another project's .env) always need a yes.
        own = path.is_relative_to(workspace.root) and workspace.protected(path) is None
        if vouched or (mode == "auto" and own):
            return Allow(f"allowed by {vouched}" if vouched else f"auto mode reads the project's secrets ({secret})")
        where = "" if own else ", outside the project"
        return Ask(f"reads {shown}{where}: {secret}", "sensitive", (grant,))
    where = workspace.where(path)
    if mode == "plan":
        return Deny(PLAN_REFUSAL.format(tool=call.name, why=""))
    if where:
        if vouched:
            return Allow(f"allowed by {vouched}")
        return Ask(f"writes outside the routine places: {where}", "sensitive", (grant,))
    allowed = _first(rules.of("allow", call.name), matches)
    if allowed:
        return Allow(f"allowed by {allowed}")
    if mode in ("accept-edits", "auto"):
        return Allow(f"{mode} mode changes files inside the working directory")
    return Ask(f"changes {shown}", "ordinary", (grant,))


# ---- network ------------------------------------------------------------------------------------------------


def _check_fetch(url: str, mode: Mode, rules: Rules) -> Verdict:
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return Allow("the tool reports the malformed URL itself")
    if parts.scheme.lower() not in ("http", "https") and url.strip().lower().startswith(f"{parts.scheme.lower()}:/"):
        return Deny(f"Not run: web_fetch only fetches http:// and https:// URLs, not '{parts.scheme}:'.")

    def matches(rule: Rule) -> bool:
        return rule.matches_url(url, host)

    denied = _first(rules.of("deny", "web_fetch"), matches)
    if denied:
        return Deny(f"Not fetched: {url} is denied by the rule {denied}.")
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    grant = Grant("h", f"always allow fetching from {host}", (_rule("web_fetch", host),))
    asked = _first(rules.of("ask", "web_fetch"), matches)
    if asked:
        return Ask(f"the rule {asked} asks first", "ordinary", (grant,))
    from mini_agent.safety.netaddr import host_risk

    risk = host_risk(host) if host else None
    if risk:
        vouched = _first(rules.of("allow", "web_fetch"), lambda rule: _vouches(rule) and matches(rule))
        if vouched:
            return Allow(f"allowed by {vouched}")
        return Ask(f"{host} is {risk}", "sensitive", (grant,))
    allowed = _first(rules.of("allow", "web_fetch"), matches)
    if allowed:
        return Allow(f"allowed by {allowed}")
    if mode == "auto":
        return Allow("auto mode fetches public URLs")
    return Ask(f"fetches {host or url} from the network", "ordinary", (grant,))


# ---- shared -------------------------------------------------------------------------------------------------


def _vouches(rule: Rule) -> bool:
    """Whether an allow rule may open what is risky in itself: the user's own rule naming something."""
    return rule.origin.trusted and rule.pattern is not None


def _rule(tool: str, pattern: str) -> Rule:
    return Rule("allow", tool, pattern, SESSION)


def _first(rules: tuple[Rule, ...], predicate) -> Rule | None:
    return next((rule for rule in rules if predicate(rule)), None)
