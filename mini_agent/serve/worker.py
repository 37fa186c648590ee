"""Become the invocation: a fork of the server takes the client's stdin/stdout/stderr, argv, environment,
working directory and umask, resets what the server changed (signals, streams, random state), runs the CLI as
a fresh process would, and ends the way the interpreter would have (exit code, atexit, flushing, death by
SIGINT after an uncaught Ctrl-C)."""

from __future__ import annotations

import io
import os
import signal
import sys
from collections.abc import Callable
from typing import NoReturn

from mini_agent.process_end import run_and_exit

FRESH_HANDLERS = {signal.SIGINT: signal.default_int_handler, signal.SIGPIPE: signal.SIG_IGN}
"""What a new interpreter installs; every other signal starts at its default."""


def become(request: dict, fds: list[int]) -> None:
    """Take the invocation's identity. Signals stay blocked (the supervisor blocked them before the fork) until
    `run` starts the CLI, so a Ctrl-C during this set-up reaches the CLI's own handler."""
    os.setsid()  # the worker's own session and group: the supervisor signals the group as a terminal would
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
    for fd in set(fds) - {0, 1, 2}:
        os.close(fd)
    for number in range(1, signal.NSIG):
        if number in (signal.SIGKILL, signal.SIGSTOP):
            continue
        try:
            signal.signal(number, FRESH_HANDLERS.get(number, signal.SIG_DFL))
        except (OSError, ValueError):
            pass
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    sys.argv = list(request["argv"])
    _fresh_state(request["env"])


def _fresh_state(env: dict[str, str]) -> None:
    import locale
    import random
    import tempfile
    import time

    time.tzset()  # TZ may differ from the server's
    try:
        locale.setlocale(locale.LC_CTYPE, "")
    except locale.Error:
        pass
    tempfile.tempdir = None  # computed from TMPDIR on first use, which may have been in the server
    random.seed()
    buffered = not env.get("PYTHONUNBUFFERED")
    encoding = env.get("PYTHONIOENCODING", "").partition(":")[0] or sys.stdout.encoding
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        errors = old.errors
        tty = os.isatty(fd)
        binary = open(fd, "rb" if fd == 0 else "wb", buffering=-1 if buffered or fd == 0 else 0, closefd=False)
        stream = io.TextIOWrapper(
            binary,
            encoding=encoding,
            errors=errors,
            newline="\n",
            line_buffering=buffered and (tty or fd == 2),
            write_through=not buffered,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def run(main: Callable[[], object]) -> NoReturn:
    """Run `main` to the end as the interpreter runs a script, then leave without returning into the server."""
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    run_and_exit(main)
