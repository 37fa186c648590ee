"""Refusals in two voices: the full text the model reads, and one plain line a human is shown.

The human's line is built to be shown whole: a long command is shortened inside its quoted rule (`--allow
'bash(npm run build -- --a…--z)'`), never by cutting the line after it, so no flag or rule is ever left half
written. The model gets the rules in full, to quote them exactly.
"""

from __future__ import annotations

import shlex

from mini_agent.safety.decisions import PLAN_REFUSAL, Ask, Deny
from mini_agent.safety.rules import EDIT_TOOLS, Rule

FLAG_LIMIT = 64
REASON_LIMIT = 48
SHOWN_FLAGS = 1
"""--allow flags shown to a human; more are counted ("and 3 more rules")."""
SHOWN_LIMIT = 220
"""The longest line a refusal shows a human (22 + 48 + 27 + 64 + 19 + 34 + 1 characters at most)."""
ELLIPSIS = "…"


def allow_flag(rule: Rule, limit: int | None = None) -> str:
    """`--allow 'tool(pattern)'`, quoted for a shell; with `limit`, a long pattern is shortened in its middle
    until the whole flag, quotes included, fits."""
    if rule.pattern is None:
        return f"--allow {shlex.quote(rule.tool)}"
    pattern = rule.pattern if limit is None else " ".join(rule.pattern.split())
    room = len(pattern)
    while True:
        flag = f"--allow {shlex.quote(f'{rule.tool}({shorten(pattern, room)})')}"
        if limit is None or len(flag) <= limit or room <= 1:
            return flag
        room -= max(1, len(flag) - limit)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, the middle replaced by an ellipsis: a command's start and end say most."""
    if len(text) <= limit:
        return text
    head = (limit - 1) * 2 // 3
    tail = limit - 1 - head
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def plain(text: str, limit: int) -> str:
    return shorten(" ".join(text.split()), limit)


def refusal_without_human(tool: str, ask: Ask) -> Deny:
    """Ask turned into Deny when nobody can answer: say why, and which flag or rule would allow it."""
    rules = ask.grants[0].rules if ask.grants else ()
    mode = _mode_that_allows(tool, ask)
    allow = " ".join(allow_flag(rule) for rule in rules)
    if ask.risk == "destructive":
        how = (
            "Destructive commands never run without a human's yes: the user can approve it in an interactive "
            f"session{f', or allow exactly this command with {allow}' if allow else ''}."
        )
    else:
        ways = [allow] if allow else []
        ways += [f"--permission-mode {mode}"] if mode else []
        how = (
            f"To allow it, the user can rerun with {' or '.join(ways)}, or add the rule to the permissions of "
            "their config file."
            if ways
            else "It needs a human's yes."
        )
    message = f"Not run: {tool} needs approval ({ask.reason}) and this run cannot ask anyone. {how}"
    return Deny(message, shown=shown_refusal(ask, rules, mode))


def shown_refusal(ask: Ask, rules: tuple[Rule, ...], mode: str | None) -> str:
    """The one line a human sees: what needs a yes and the flags that give it, whole, at most SHOWN_LIMIT long."""
    reason = plain(ask.reason, REASON_LIMIT)
    flags = [allow_flag(rule, FLAG_LIMIT) for rule in rules[:SHOWN_FLAGS]]
    if len(rules) > SHOWN_FLAGS:
        hidden = len(rules) - SHOWN_FLAGS
        flags[-1] += f" (and {hidden} more rule{'s' if hidden > 1 else ''})"
    if ask.risk == "destructive":
        how = f"approve it in an interactive session, or rerun with {' '.join(flags)}" if flags else "approve it"
        return f"Not run: needs a yes ({reason}); {how}."
    ways = [" ".join(flags)] if flags else []
    ways += [f"--permission-mode {mode}"] if mode else []
    if not ways:
        return f"Not run: needs a yes ({reason}), and nobody could be asked."
    return f"Not run: needs a yes ({reason}); to allow it, rerun with {' or '.join(ways)}."


def plan_refusal(tool: str, why: str = "", what: str = "") -> Deny:
    """Plan mode refuses a change: the model is told how to carry on, the human what was not done."""
    detail = f" ({plain(what, REASON_LIMIT)})" if what else ""
    shown = f"Not run: plan mode makes no changes{detail}; switch modes to let it run."
    return Deny(PLAN_REFUSAL.format(tool=tool, why=why), shown=shown)


def mode_that_runs(tool: str) -> str:
    """The least open mode that runs an ordinary call of this tool without asking."""
    return "accept-edits" if tool in EDIT_TOOLS else "auto"


def _mode_that_allows(tool: str, ask: Ask) -> str | None:
    return mode_that_runs(tool) if ask.risk == "ordinary" else None
