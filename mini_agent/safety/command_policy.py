"""The policy for shell commands: the classifier's verdict, the mode and the rules decide whether a command runs,
asks or is refused, and where it runs: the read-only sandbox, the workspace-write one, or outside.

A command that runs without a human's yes runs in the OS sandbox: read-only commands (in every mode) in the
read-only one, everything else the policy lets through on its own (auto mode, wildcard rules) in the
workspace-write one. Only a human's yes, an exact rule of the user's or bypass mode runs a command outside; the
model asking for that (`outside_sandbox`) always asks a human.
"""

from __future__ import annotations

from mini_agent.safety.decisions import (
    Allow,
    Ask,
    Deny,
    Grant,
    Mode,
    RiskLevel,
    Sandbox,
    Verdict,
    first,
    session_rule,
    vouches,
)
from mini_agent.safety.refusals import plan_refusal
from mini_agent.safety.rules import BASH, Rule, Rules
from mini_agent.safety.workspace import Workspace

NO_SANDBOX_ASKS = (
    "this machine has no OS sandbox to run it in, so auto mode asks before commands that are not read-only"
)
# Tools whose second word names what they do: `git commit *` is a useful prefix, `git *` is not.
TWO_WORD_COMMANDS = frozenset(
    "git npm pnpm yarn bun cargo go docker podman kubectl helm pip pip3 uv poetry make gh brew apt conda "
    "dotnet mvn gradle terraform rustup npx".split()
)


def check_command(command: str, mode: Mode, rules: Rules, workspace: Workspace, sandboxed: bool) -> Verdict:
    from mini_agent.safety.shell import classify

    verdict = classify(command, workspace)
    forms = {form for part in verdict.parts for form in (part.text, *part.forms)} | {command.strip()}
    denied = first(rules.of("deny", BASH), lambda rule: any(rule.matches_command(form) for form in forms))
    if denied:
        return Deny(f"Not run: the command is denied by the rule {denied}.", rule=str(denied))
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    label = verdict.reason if verdict.reason.startswith(verdict.kind) else f"{verdict.kind}: {verdict.reason}"
    asked = first(rules.of("ask", BASH), lambda rule: any(rule.matches_command(form) for form in forms))
    risky = [part for part in verdict.parts if part.kind != "read-only"]
    if not risky and verdict.kind != "read-only":
        risky = [_whole(command, verdict)]
    if asked:
        return Ask(f"the rule {asked} asks first", _level(verdict.kind), _command_grants(risky), label)
    allows = rules.of("allow", BASH)
    # The network opens inside the sandbox only for what the user's own rules name: a project file's rule is
    # the repository speaking, and a repository must not open a way out for its own commands.
    network = any(vouches(rule) for rule in _rules_for(verdict.parts, allows))
    if verdict.kind == "read-only":
        return Allow(label, sandbox="read-only" if sandboxed else "none", network=network)
    if mode == "plan":
        return plan_refusal("the command", why=f" ({label})", what=verdict.reason)
    uncovered = [part for part in risky if not _covered(part, allows)]
    if not uncovered:
        covering = [_covering(part, allows) for part in risky]
        reason = "allowed by " + "; ".join(sorted({str(rule) for rule in covering}))
        if all(rule is not None and vouches(rule) and rule.exact for rule in covering):
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


def outside_sandbox(command: str, allowed: Allow, workspace: Workspace) -> Verdict:
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
        return first(allows, lambda rule: vouches(rule) and rule.exact and rule.matches_command(part.text))
    return first(allows, lambda rule: any(rule.matches_command(form) for form in (part.text, *part.forms)))


def _covered(part, allows: tuple[Rule, ...]) -> bool:
    return _covering(part, allows) is not None


def _command_grants(parts) -> tuple[Grant, ...]:
    exact = tuple(dict.fromkeys(session_rule(BASH, part.text) for part in parts if part.text.strip()))
    grants = []
    if exact and all(rule.exact for rule in exact):
        # The label shows the command as written: `-m "fix the bug"`, not the unquoted words the rule matches.
        written = next(part.written or part.text for part in parts if part.text.strip())
        label = f"always allow `{written}`" if len(exact) == 1 else "always allow these exact commands"
        grants.append(Grant("a", label, exact))
    if all(part.kind != "destructive" for part in parts):
        prefixes = tuple(dict.fromkeys(session_rule(BASH, f"{_prefix(part.text)} *") for part in parts))
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
