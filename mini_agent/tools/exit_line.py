"""How a command ended, as the bash tool reports it: the number and signal it puts on its ToolResult
(`exit_code`, `killed_by`) and the last line the model reads, `exit code: N` or `exit code: 137 (killed by
SIGKILL)`. Readers use the numbers on the result; nothing parses the text back.

Imports nothing heavy.
"""

from __future__ import annotations

import signal


def shell_exit(returncode: int) -> tuple[int, str | None]:
    """A subprocess's return code as the shell reports it: (code, the name of the signal that killed it or None).
    A negative return code is a signal, reported as 128 + its number."""
    if returncode >= 0:
        return returncode, None
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return 128 - returncode, name


def exit_line(code: int, killed_by: str | None = None) -> str:
    """The line the model reads after a command's output."""
    return f"exit code: {code}" + (f" (killed by {killed_by})" if killed_by else "")
