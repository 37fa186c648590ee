"""What an approval question shows: the call in one line, why it asks (the command's class said once), the
command or the change as a diff capped to what fits under the header, and the answers on offer.

The header must still be on screen when the human answers, so a long diff is cut to fit the terminal, with
"… N more lines" and the key that shows all of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from mini_agent.safety.gate import ApprovalRequest
from mini_agent.ui.render import KEY_ARGUMENT, describe_call

COLOURS = {"destructive": "31", "sensitive": "33", "ordinary": "36", "read-only": "32"}
SHOWN_ELSEWHERE = {"command", "content", "old_string", "new_string", "description"}
"""Arguments shown as the command line, the diff or a line of their own rather than in the argument line."""
FULL_DIFF_KEY = "v"
BELOW_DIFF = 4
"""Rows under the diff: the "more" line, the answers, the prompt, and the row the answer scrolls."""
MIN_DIFF_ROWS = 6

Paint = Callable[[str, str], str]


@dataclass(frozen=True)
class Shown:
    lines: list[str]
    """The question as printed, the diff capped."""
    diff: list[str]
    """The whole diff, painted, for the key that shows it all; empty when nothing was cut."""
    header: str


def approval_block(request: ApprovalRequest, paint: Paint, rows: int = 24, columns: int = 80) -> Shown:
    """The question for a terminal of `rows` x `columns`."""
    ask = request.ask
    colour = COLOURS.get(ask.risk, "36")
    header = f"{paint(colour, '●')} {describe_call(request.tool.name, request.arguments)} needs your approval"
    lines = ["", header]
    lines += [f"  {paint(colour, line)}" for line in reasons(request)]
    if request.tool.name == "bash":
        lines += [f"  $ {line}" for line in str(request.arguments.get("command", "")).splitlines() or [""]]
        description = request.arguments.get("description")
        if description:
            lines.append(f"  {paint('2', '# ' + ' '.join(str(description).split()))}")
    extra = other_arguments(request.tool.name, request.arguments)
    if extra:
        lines.append(f"  {paint('2', extra)}")
    raw = (request.preview or "").splitlines()
    diff = [f"  {_paint_diff_line(line, paint)}" for line in raw]
    fits = _lines_that_fit(raw, max(MIN_DIFF_ROWS, rows - _rows(lines, columns) - BELOW_DIFF), columns)
    if fits < len(diff):
        more = f"… {len(diff) - fits} more lines · {FULL_DIFF_KEY} shows them all"
        lines += diff[:fits] + [f"  {paint('2', more)}"]
    else:
        lines += diff
        diff = []
    options = ["y yes", "n no, then say why (Enter: no)"]
    options += [f"{grant.key} {grant.label}" for grant in ask.grants]
    lines.append("  " + paint("2", " · ".join(options)))
    return Shown(lines, diff, header)


def reasons(request: ApprovalRequest) -> list[str]:
    """Why it asks, the class of a command said once: "ordinary: not on the read-only list", not that and then
    "class: ordinary: not on the read-only list" below it."""
    ask = request.ask
    if not ask.classification or ask.classification == ask.reason:
        return [ask.reason]
    if ask.reason in ask.classification:
        return [ask.classification]
    return [ask.reason, f"class: {ask.classification}"]


def other_arguments(tool: str, arguments: dict) -> str:
    """The arguments not shown otherwise, as `name: value` words (`replace_all: true`), never a JSON object."""
    shown = []
    for name, value in arguments.items():
        if name in SHOWN_ELSEWHERE or name == KEY_ARGUMENT.get(tool) or value is None or value is False:
            continue
        if tool == "bash" and name in ("timeout", "outside_sandbox"):
            continue  # the reason says when a command leaves the sandbox; a timeout is no risk
        text = json.dumps(value) if isinstance(value, bool) else " ".join(str(value).split())
        shown.append(f"{name}: {text}")
    return " · ".join(shown)


def _rows(lines: list[str], columns: int) -> int:
    return sum(_height(len(line), columns) for line in lines)


def _height(width: int, columns: int) -> int:
    """Terminal rows a line of `width` characters takes once wrapped (escape codes aside: an estimate)."""
    return max(1, -(-width // max(1, columns)))


def _lines_that_fit(raw: list[str], room: int, columns: int) -> int:
    """How many diff lines (indented by two) fit in `room` rows."""
    used = 0
    for count, line in enumerate(raw):
        used += _height(len(line) + 2, columns)
        if used > room:
            return count
    return len(raw)


def _paint_diff_line(line: str, paint: Paint) -> str:
    if line.startswith("+") and not line.startswith("+++"):
        return paint("32", line)
    if line.startswith("-") and not line.startswith("---"):
        return paint("31", line)
    if line.startswith("@@"):
        return paint("36", line)
    return line
