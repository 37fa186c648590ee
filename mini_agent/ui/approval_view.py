"""What an approval question shows: the call in one line, why it asks (the command's class said once), the
command or the change as a diff capped to what fits under the header, and the answers on offer.

The header must still be on screen when the human answers, so a long command or diff is cut to fit the terminal,
with "… N more lines" and the key that shows all of it. Nothing the model wrote reaches the terminal as it is:
every piece of it passes `visible` (ui/terminal_text.py), and a call that holds control characters says so in a
warning line under the header.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from mini_agent.gate import ApprovalRequest
from mini_agent.tools.base import Tool
from mini_agent.ui.render import describe_call
from mini_agent.ui.terminal_text import CONTROLS_WARNING, any_controls, has_controls, visible

COLOURS = {"destructive": "31", "sensitive": "33", "ordinary": "36", "read-only": "32"}
SHOWN_ELSEWHERE = {"command", "content", "old_string", "new_string", "description"}
"""Arguments shown as the command line, the diff or a line of their own rather than in the argument line."""
BACKGROUND = "runs as a background job: it keeps running after this call, until it is stopped or the session ends"
FULL_DIFF_KEY = "v"
BELOW_DIFF = 4
"""Rows under the diff: the "more" line, the answers, the prompt, and the row the answer scrolls."""
ABOVE_HEADER = 1
"""The blank line the question is set apart by (ui/spacing.py), printed with it."""
MIN_DIFF_ROWS = 6

Paint = Callable[[str, str], str]


@dataclass(frozen=True)
class Shown:
    lines: list[str]
    """The question as printed, the command and the diff capped."""
    diff: list[str]
    """The whole command and diff, painted, for the key that shows it all; empty when nothing was cut."""
    header: str


def approval_block(request: ApprovalRequest, paint: Paint, rows: int = 24, columns: int = 80) -> Shown:
    """The question for a terminal of `rows` x `columns`."""
    ask = request.ask
    colour = COLOURS.get(ask.risk, "36")
    call = describe_call(request.tool.name, request.arguments, request.tool)
    header = f"{paint(colour, '●')} {call} needs your approval"
    lines = [header]
    lines += [f"  {paint(colour, _short(visible(line), 2 * columns - 4))}" for line in reasons(request)]
    if any_controls(request.arguments) or has_controls(request.preview or ""):
        lines.append(f"  {paint('1;31', '⚠ this call ' + CONTROLS_WARNING)}")
    whole: list[tuple[str, str]] = []
    """(colour, text) rows that may be cut, whole: the command, its description, other arguments, the diff."""
    if request.tool.key_argument == "command":  # a command line: shown whole, one `$` row per line
        command = str(request.arguments.get("command", ""))
        whole += [("", f"$ {visible(line)}".expandtabs()) for line in command.split("\n")]
        description = request.arguments.get("description")
        if description:
            whole.append(("2", "# " + " ".join(visible(str(description)).split())))
        if request.arguments.get("run_in_background") is True:
            whole.append(("1", BACKGROUND))
    extra = other_arguments(request.tool, request.arguments)
    if extra:
        whole.append(("2", extra))
    whole += [(_diff_colour(line), visible(line).expandtabs()) for line in _diff_lines(request.preview)]
    body = [(code, _short(text, 4 * columns - 4) if code == "2" else text) for code, text in whole]
    options = ["y yes", "n no, then say why (Enter: no)"]
    options += [f"{grant.key} {_short(visible(grant.label), columns - 10)}" for grant in ask.grants]
    answers = "  " + paint("2", " · ".join(options))
    room = max(MIN_DIFF_ROWS, rows - ABOVE_HEADER - _rows(lines + [answers], columns) - BELOW_DIFF)
    shown, more = _fit(body, room, columns)
    if not more and body != whole:
        more = f"… {FULL_DIFF_KEY} shows all of it"
    lines += [f"  {paint(code, text) if code else text}" for code, text in shown]
    if more:
        lines.append(f"  {paint('2', more)}")
    lines.append(answers)
    return Shown(lines, [f"  {paint(code, text) if code else text}" for code, text in whole] if more else [], header)


def _short(text: str, cells: int) -> str:
    """`text` cut to `cells` terminal cells with an ellipsis: a line that must not push the header off screen."""
    from rich.cells import cell_len, set_cell_size

    if cell_len(text) <= cells:
        return text
    return set_cell_size(text, max(1, cells - 1)).rstrip() + "…"


def _diff_lines(preview: str | None) -> list[str]:
    """The preview's lines, split at line feeds only: a CR or a form feed inside a line is shown in it."""
    if not preview:
        return []
    return preview.removesuffix("\n").split("\n")


def _fit(body: list[tuple[str, str]], room: int, columns: int) -> tuple[list[tuple[str, str]], str]:
    """The rows of `body` that fit in `room` terminal rows (indented by two), the last one cut if it alone is too
    long, and the line that says what was left out ("" when nothing was)."""
    from rich.cells import cell_len, set_cell_size

    used = 0
    for count, (code, text) in enumerate(body):
        height = _height(cell_len(text) + 2, columns)
        if used + height <= room:
            used += height
            continue
        left = len(body) - count
        free = (room - used) * max(1, columns) - 3
        if free < columns // 2:  # not worth a cut line: say so on the next row instead
            return body[:count], f"… {left} more lines · {FULL_DIFF_KEY} shows them all"
        part = set_cell_size(text, free).rstrip()
        cut = f"… {len(text) - len(part):,} more characters"
        after = f" and {left - 1} more lines" if left > 1 else ""
        return [*body[:count], (code, part)], f"{cut}{after} · {FULL_DIFF_KEY} shows all of it"
    return body, ""


def reasons(request: ApprovalRequest) -> list[str]:
    """Why it asks, the class of a command said once: "ordinary: not on the read-only list", not that and then
    "class: ordinary: not on the read-only list" below it."""
    ask = request.ask
    if not ask.classification or ask.classification == ask.reason:
        return [ask.reason]
    if ask.reason in ask.classification:
        return [ask.classification]
    return [ask.reason, f"class: {ask.classification}"]


def other_arguments(tool: Tool, arguments: dict) -> str:
    """The arguments not shown otherwise, as `name: value` words (`replace_all: true`), never a JSON object; one
    the model gave its default value (`offset: 0`) says nothing and is left out."""
    shown = []
    properties = tool.input_schema.get("properties", {})
    for name, value in arguments.items():
        if name in SHOWN_ELSEWHERE or name == tool.key_argument or value is None or value is False:
            continue
        if "default" in properties.get(name, {}) and properties[name]["default"] == value:
            continue
        if tool.risk == "exec" and name in ("timeout", "outside_sandbox", "run_in_background"):
            continue  # the reason says when a command leaves the sandbox; a timeout is no risk
        text = json.dumps(value) if isinstance(value, bool) else " ".join(visible(str(value)).split())
        shown.append(f"{visible(name)}: {text}")
    return " · ".join(shown)


def _rows(lines: list[str], columns: int) -> int:
    from rich.cells import cell_len

    return sum(_height(cell_len(line), columns) for line in lines)


def _height(width: int, columns: int) -> int:
    """Terminal rows a line of `width` characters takes once wrapped (escape codes aside: an estimate)."""
    return max(1, -(-width // max(1, columns)))


def _diff_colour(line: str) -> str:
    if line.startswith("+") and not line.startswith("+++"):
        return "32"
    if line.startswith("-") and not line.startswith("---"):
        return "31"
    if line.startswith("@@"):
        return "36"
    return ""
