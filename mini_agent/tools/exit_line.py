"""How a command ended and what it printed, as bash and the job tools report them: the number and signal put on
the ToolResult (`exit_code`, `killed_by`), the last line the model reads, `exit code: N` or `exit code: 137 (killed
by SIGKILL)`, and the output kept as head and tail with the cut said (`output_text`). Readers use the numbers on
the result; nothing parses the text back.

Imports nothing heavy.
"""

from __future__ import annotations

import signal
from typing import TYPE_CHECKING

from mini_agent.xmltext import system_hint

if TYPE_CHECKING:
    from mini_agent.processes.run import BoundedOutput


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


def output_text(output: BoundedOutput) -> str:
    """The output as the model reads it: all of it, or its head and tail and how much was cut between."""
    if not output.omitted:
        return (output.head + output.tail).rstrip("\n")
    hint = system_hint(
        "truncated",
        f"The output was {output.total} characters; {output.omitted} in the middle were cut. To see all of it, "
        "rerun the command redirecting its output to a file and read that with read_file, or filter the output "
        "with grep, head or tail.",
        omitted_chars=str(output.omitted),
    )
    return f"{output.head}\n\n[... {output.omitted} characters omitted ...]\n\n{output.tail.rstrip(chr(10))}\n{hint}"
