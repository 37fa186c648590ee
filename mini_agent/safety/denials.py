"""A refused tool call as a record a script can act on: why it was refused and what would allow it.

The gate writes one for every Deny (the policy's, a deny rule's, plan mode's, or an approval nobody gave); the
one-shot outputs report them (`permission_denials`) and a run with any ends with its own exit status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mini_agent.safety.decisions import Ask, Deny
from mini_agent.safety.refusals import allow_flag, mode_that_runs

DenialKind = Literal["rule", "plan", "approval", "policy", "hook"]


@dataclass(frozen=True)
class Denial:
    kind: DenialKind
    """`rule`: a deny rule refused it; `plan`: plan mode is read-only; `approval`: it needed a yes that was not
    given (nobody to ask, or the human said no); `policy`: refused outright (e.g. a URL scheme); `hook`: a
    PreToolUse hook blocked it, or a PermissionRequest hook refused it."""
    reason: str
    allow: tuple[str, ...]
    """Flags or config rules that would let the call run next time; empty when nothing short of changing the
    deny rule (or a human's yes) would."""
    rule: str | None
    """The deny rule that refused it, with where it is defined."""
    message: str
    """The text the model got as the tool result."""

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "reason": self.reason,
            "allow": list(self.allow),
            "rule": self.rule,
            "message": self.message,
        }


def denial(tool: str, refusal: Deny, asked: Ask | None, mode: str) -> Denial:
    """The record of a refusal; `asked` is the question the refusal answered, if the policy asked one."""
    if asked is not None:
        return Denial("approval", asked.reason, allow_options(tool, asked), None, refusal.message)
    if refusal.rule is not None:
        return Denial("rule", f"denied by the rule {refusal.rule}", (), refusal.rule, refusal.message)
    if mode == "plan":
        return Denial(
            "plan", "plan mode is read-only", (f"--permission-mode {mode_that_runs(tool)}",), None, refusal.message
        )
    return Denial("policy", refusal.message, (), None, refusal.message)


def hook_denial(message: str, event: str = "PreToolUse") -> Denial:
    """A PreToolUse hook blocked the call (or a PermissionRequest hook refused it): only the hook (the user's own
    command) can let it through."""
    return Denial("hook", f"a {event} hook {'blocked' if event == 'PreToolUse' else 'refused'} it", (), None, message)


def allow_options(tool: str, asked: Ask) -> tuple[str, ...]:
    """What would answer the question without a human: the "always" answer's rules as --allow flags, and for an
    ordinary call the mode that runs it. Destructive and sensitive calls are opened only by a rule naming them."""
    rules = asked.grants[0].rules if asked.grants else ()
    options = [allow_flag(rule) for rule in rules]
    if asked.risk == "ordinary":
        options.append(f"--permission-mode {mode_that_runs(tool)}")
    return tuple(options)
