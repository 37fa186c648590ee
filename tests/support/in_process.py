"""The command run inside the test's process (mini_agent.cli.main.run_in_process), with a result shaped like the
one `subprocess.run(..., capture_output=True)` gives: the same assertions read either."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

from support import BIN


def environment(stdin: bytes, variables: dict[str, str], cwd: Path):
    """An Environment of in-memory streams, none a terminal, as the installed command sees pipes: stdout strict
    UTF-8 and stderr with backslash escapes, as the interpreter opens them."""
    from mini_agent.app.environment import Environment

    encoding, _, chosen = variables.get("PYTHONIOENCODING", "").partition(":")

    def text(raw: io.BytesIO, errors: str) -> io.TextIOWrapper:
        return io.TextIOWrapper(
            raw, encoding=encoding or "utf-8", errors=chosen or errors, newline="\n", write_through=True
        )

    return Environment(
        stdin=text(io.BytesIO(stdin), "strict"),
        stdout=text(io.BytesIO(), "strict"),
        stderr=text(io.BytesIO(), "backslashreplace"),
        variables=dict(variables),
        cwd=Path(cwd),
        terminal_size=os.terminal_size((80, 24)),
    )


def run_in_process(
    args: list[str], stdin: bytes | None, variables: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess:
    from mini_agent.cli.main import run_in_process as run

    world = environment(stdin or b"", variables, cwd)
    status = run(list(args), world)
    return subprocess.CompletedProcess(
        [str(BIN), *args], status, world.stdout.buffer.getvalue(), world.stderr.buffer.getvalue()
    )


def run_repl_in_process(
    args: list[str], typed: list[str], variables: dict[str, str], cwd: Path
) -> subprocess.CompletedProcess:
    """The REPL in this process: stdin said to be a terminal, the lines `typed` at its prompts (each sent with
    Enter; `\\x03` alone is Ctrl-C at the prompt), then end of input (Ctrl-D). prompt_toolkit reads them from a
    pipe and draws nothing; what the REPL prints is in stdout."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from mini_agent.cli.main import run_in_process as run

    world = environment(b"", variables, cwd)
    world.stdin_isatty = True
    with create_pipe_input() as keys, create_app_session(input=keys, output=DummyOutput()):
        for line in typed:
            keys.send_text(line + "\r")
        keys.close()
        status = run(list(args), world)
    return subprocess.CompletedProcess(
        [str(BIN), *args], status, world.stdout.buffer.getvalue(), world.stderr.buffer.getvalue()
    )
