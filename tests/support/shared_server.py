"""One warm server per pytest process, which the pty and subprocess runs of the installed command go through.

Each start of the command imports the model SDK (~2 s of CPU); a run handed to a warm server costs a fork (~0.3 s
of the server's CPU). The server is started by the first run that asks (a worker that runs no such test never
pays its preload, ~4 s of CPU), lives in a private runtime directory of its own (no test of the warm start, and
no user's server, shares it), and is stopped and removed when the session ends (`tests/conftest.py`). Every run
still carries its own environment (home, model URL, settings), working directory, umask and terminal: the worker
takes them from the client.

`repl.spawn()` goes warm unless told `cold=True`: for a test whose subject is the process itself (killed or
signalled, its start-up, limits, namespaces or confinement). `start_cli` and `run_installed`, mostly used for
such tests, stay cold unless told `warm=True`.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from support import alive
from support.warm import private_runtime_dir, start, stop_servers_in

IDLE = "7200"
"""Seconds the server waits for the next run: the session ends it, never its idle timer, however slow the tests."""

_state: dict[str, object] = {}


def warm_env(env: dict[str, str]) -> dict[str, str]:
    """`env` (a run's environment, cold) made to go through this process's warm server, started if not running."""
    warm = {k: v for k, v in env.items() if k != "MINI_AGENT_NO_SERVER"}
    warm.update(XDG_RUNTIME_DIR=str(_running()), MINI_AGENT_SERVER_IDLE=IDLE)
    return warm


def _running() -> Path:
    directory = _state.get("dir")
    if directory is None:
        directory = _state["dir"] = private_runtime_dir()
    pid = _state.get("pid")
    if pid is None or not alive(pid):  # not started yet, or gone (its package changed): a fresh one
        _state["pid"] = start(_server_env(directory))
    return directory


def _server_env(directory: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(XDG_RUNTIME_DIR=str(directory), MINI_AGENT_SERVER_IDLE=IDLE)
    return env


def server_pid() -> int | None:
    """The server's pid while it runs (for measuring its CPU: it is detached, so no test process counts it)."""
    pid = _state.get("pid")
    return pid if pid is not None and alive(pid) else None


def stop() -> None:
    """Stop the server, and any run of it still going: a server's stop leaves its runs alone (by design), and a
    failed test's run must not outlive the session (killing its supervisor kills its worker, PR_SET_PDEATHSIG)."""
    directory = _state.pop("dir", None)
    pid = _state.pop("pid", None)
    if pid is not None:
        for child in _children(pid):
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
    if directory is not None:
        stop_servers_in(directory)
        shutil.rmtree(directory, ignore_errors=True)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
        except OSError:
            continue
    return found
