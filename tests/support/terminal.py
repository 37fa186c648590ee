"""What a terminal shows after some output: enough of one to follow rich's cursor-up and erase-line codes."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"\x1b\[(\??)(\d*)([A-Za-z])")


def screen(output: str) -> list[str]:
    """What a terminal shows after `output`: enough of one to follow rich's cursor-up and erase-line codes."""
    lines, row, col = [""], 0, 0
    index = 0
    while index < len(output):
        control = _CONTROL.match(output, index)
        if control:
            private, number, kind = control.groups()
            if kind == "A":
                row = max(0, row - int(number or 1))
            elif kind == "K":
                lines[row] = ""
            elif kind not in "mlh" or (kind in "lh" and not private):
                raise AssertionError(f"unexpected control sequence {control.group(0)!r}")
            index = control.end()
            continue
        char = output[index]
        index += 1
        if char == "\n":
            row, col = row + 1, 0
            lines += [""] * (row + 1 - len(lines))
        elif char == "\r":
            col = 0
        else:
            line = lines[row].ljust(col)
            lines[row] = line[:col] + char + line[col + 1 :]
            col += 1
    return [line.rstrip() for line in lines]
