"""The world a front end runs in: its streams, whether each is a terminal, the terminal's size, the environment
variables, the working directory and a clock.

The front ends (cli/main.py, app/launch.py, app/oneshot.py) read these from an `Environment` instead of from
`sys.stdin`, `os.environ` and `os.getcwd()`, so a test runs the command in its own process with its own streams
(`mini_agent.cli.main.run_in_process`). `of_process()` is the real one, read where the command starts.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO


@dataclass
class Environment:
    stdin: TextIO | None
    """None when the process has no stdin (closed, or started without one)."""
    stdout: TextIO
    stderr: TextIO
    stdin_isatty: bool = False
    stdout_isatty: bool = False
    stderr_isatty: bool = False
    variables: Mapping[str, str] = field(default_factory=dict)
    cwd: Path = field(default_factory=Path.cwd)
    terminal_size: os.terminal_size = os.terminal_size((80, 24))
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def of_process(cls) -> Environment:
        """This process's own: the interpreter's streams, os.environ, the working directory."""
        stdin = sys.stdin if sys.stdin is not None and not sys.stdin.closed else None
        return cls(
            stdin=stdin,
            stdout=sys.stdout,
            stderr=sys.stderr,
            stdin_isatty=stdin is not None and _isatty(stdin),
            stdout_isatty=_isatty(sys.stdout),
            stderr_isatty=_isatty(sys.stderr),
            variables=os.environ,
            cwd=Path.cwd(),
            terminal_size=_terminal_size(),
        )

    @contextmanager
    def installed(self) -> Iterator[Environment]:
        """Make this the process's environment for a while: what runs below the front ends (config files,
        renderers, the children the tools start) still reads `sys.*`, `os.environ` and the working directory.
        Only for running the command inside another program (tests); not thread-safe, restored on the way out."""
        import tempfile

        saved_streams = (sys.stdin, sys.stdout, sys.stderr)
        saved_tempdir, tempfile.tempdir = tempfile.tempdir, None  # computed again from this TMPDIR
        saved_variables = dict(os.environ)
        saved_cwd = os.getcwd()
        if self.variables is not os.environ:
            os.environ.clear()
            os.environ.update(self.variables)
        os.chdir(self.cwd)
        sys.stdin, sys.stdout, sys.stderr = self.stdin, self.stdout, self.stderr
        try:
            yield self
        finally:
            sys.stdin, sys.stdout, sys.stderr = saved_streams
            tempfile.tempdir = saved_tempdir
            os.chdir(saved_cwd)
            if os.environ != saved_variables:
                os.environ.clear()
                os.environ.update(saved_variables)


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _terminal_size() -> os.terminal_size:
    try:
        return os.get_terminal_size(sys.__stderr__.fileno())
    except (AttributeError, OSError, ValueError):
        return os.terminal_size((80, 24))
