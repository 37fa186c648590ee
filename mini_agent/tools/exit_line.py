"""The last line of a bash result, `exit code: N` or `exit code: 137 (killed by SIGKILL)`: written by the bash
tool, read back by whatever reports how a command ended (the tool line on screen, the recent-activity block).

Imports nothing heavy: the context sources read it on every turn.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

_EXIT_LINE = re.compile(r"^exit code: (\d+)(?: \(killed by ([^)]+)\))?$", re.MULTILINE)


@dataclass(frozen=True)
class ExitStatus:
    code: int
    killed_by: str | None = None
    """The signal's name when a signal ended the command."""


def exit_line(returncode: int) -> str:
    """The line for a subprocess's return code (negative: the signal that killed it, reported as the shell does)."""
    if returncode >= 0:
        return f"exit code: {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"exit code: {128 - returncode} (killed by {name})"


def exit_status(content: str) -> ExitStatus | None:
    """How the command of a bash result ended (its last exit line), or None when the result has none."""
    found = _EXIT_LINE.findall(content)
    if not found:
        return None
    code, killed_by = found[-1]
    return ExitStatus(int(code), killed_by or None)
