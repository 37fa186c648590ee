"""The vocabulary of permission decisions: a tool call in; Allow, Deny or Ask out, with the "always" answers a
human may give; plus the small helpers every part of the policy shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from mini_agent.safety.rules import EXIT_PLAN_MODE, Origin, Rule

Mode = Literal["default", "accept-edits", "auto", "plan", "bypass"]
RiskLevel = Literal["read-only", "ordinary", "sensitive", "destructive"]
Sandbox = Literal["read-only", "workspace-write", "none"]
SESSION = Origin("session", "(your answer)")
PLAN_REFUSAL = (
    "Plan mode is read-only, so {tool} was not run{why}. Investigate with read_file and read-only shell commands, "
    f"then present the plan with {EXIT_PLAN_MODE}: once the user approves it, the session leaves plan mode and "
    "you carry it out."
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
    mode: Mode | None = None
    """An approved plan: the permission mode the human chose to carry it out in (accept-edits or default)."""
    plan: str | None = None
    """An approved plan the human edited first: their version, which the model carries out."""


@dataclass(frozen=True)
class Deny:
    message: str
    """Sent to the model as the tool_result, so it can adapt."""
    stop_turn: bool = False
    """End the turn instead of letting the model carry on (the human pressed Ctrl-C at the question)."""
    shown: str | None = None
    """One plain line for the human when `message` is written for the model (plan mode, a run that cannot ask)."""
    rule: str | None = None
    """The deny rule that refused the call, for the record a script gets (safety/denials.py)."""


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


def vouches(rule: Rule) -> bool:
    """Whether an allow rule may open what is risky in itself: the user's own rule naming something."""
    return rule.origin.trusted and rule.pattern is not None


def session_rule(tool: str, pattern: str) -> Rule:
    return Rule("allow", tool, pattern, SESSION)


def first(rules: tuple[Rule, ...], predicate) -> Rule | None:
    return next((rule for rule in rules if predicate(rule)), None)
