"""One warm server per test run, which the pty and subprocess runs of the installed command go through.

Each start of the command imports the model SDK (~2 s of CPU); a run handed to a warm server costs a fork (~0.3 s
of the server's CPU). The server lives in a private runtime directory that the run's first process (xdist's
controller, or the only pytest process) makes and every test worker inherits (RUNTIME_VARIABLE): the workers
share one server, so its preload (~4 s of CPU) is paid once per run, not once per worker. The first run that asks
starts it (`mini-agent server start` takes a lock: two workers asking at once get the same server); no test of
the warm start, and no user's server, shares the directory. The first process stops it and removes the directory
when the run ends (`tests/conftest.py`). Every run still carries its own environment (home, model URL,
settings), working directory, umask and terminal: the worker takes them from the client.

`repl.spawn()` goes warm unless told `cold=True`: for a test whose subject is the process itself (killed or
signalled, its start-up, limits, namespaces or confinement). `start_cli` and `run_installed`, mostly used for
such tests, stay cold unless told `warm=True`.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from support import alive, children_of
from support.warm import private_runtime_dir, servers_in, start, stop_servers_in

IDLE = "7200"
"""Seconds the server waits for the next run: the run's end stops it, never its idle timer, however slow the tests."""
RUNTIME_VARIABLE = "MINI_AGENT_TEST_SHARED_RUNTIME"
"""Where the run's shared server lives: set by the run's first process, inherited by xdist's workers."""

_state: dict[str, object] = {}


def claim() -> bool:
    """Make the run's shared runtime directory unless an earlier process of the run made it: True in the process
    that made it, which stops the server when the run ends (`stop`)."""
    if os.environ.get(RUNTIME_VARIABLE):
        return False
    os.environ[RUNTIME_VARIABLE] = str(private_runtime_dir())
    return True


def warm_env(env: dict[str, str]) -> dict[str, str]:
    """`env` (a run's environment, cold) made to go through the run's warm server, started if not running."""
    warm = {k: v for k, v in env.items() if k != "MINI_AGENT_NO_SERVER"}
    warm.update(XDG_RUNTIME_DIR=str(_running()), MINI_AGENT_SERVER_IDLE=IDLE)
    return warm


def _running() -> Path:
    directory = Path(os.environ[RUNTIME_VARIABLE])
    pid = _state.get("pid")
    if pid is None or not alive(pid):  # not asked for yet in this worker, or gone (its package changed)
        _state["pid"] = start(_server_env(directory))
    return directory


def _server_env(directory: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(XDG_RUNTIME_DIR=str(directory), MINI_AGENT_SERVER_IDLE=IDLE)
    return env


def stop() -> None:
    """Stop the run's server, and any run of it still going: a server's stop leaves its runs alone (by design),
    and a failed test's run must not outlive the session (killing its supervisor kills its worker,
    PR_SET_PDEATHSIG). In the process that claimed the directory, once every worker is done."""
    directory = Path(os.environ[RUNTIME_VARIABLE])
    for pid in servers_in(directory):
        for child in children_of(pid):
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
    stop_servers_in(directory)
    shutil.rmtree(directory, ignore_errors=True)
