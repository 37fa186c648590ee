"""Helpers for tests of the warm start: a private runtime directory per test (or one per module, with its server
shared by the tests that only need one running), the environment of a run, the server's status."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from support import BIN, PATIENCE, TEST_KEY, eventually

PR_SET_NO_NEW_PRIVS = 38
"""prctl's option that every command in the agent's sandbox runs with: a process so marked must get nothing."""


def private_runtime_dir() -> Path:
    """Short (a socket path has ~100 bytes) and 0700, as $XDG_RUNTIME_DIR is."""
    return Path(tempfile.mkdtemp(prefix="ma-rt-"))


def command(args: list[str], env: dict, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN), *args], env=env, capture_output=True, timeout=PATIENCE, **kwargs)


def status(env: dict) -> dict[str, str]:
    """`mini-agent server status` as a dict of its lines ("warm server", "pid", ...)."""
    done = command(["server", "status"], env)
    lines = [line.partition(": ") for line in done.stdout.decode().splitlines()]
    return {key: value for key, _, value in lines}


def start(env: dict) -> int:
    done = command(["server", "start"], env)
    assert done.returncode == 0, done.stderr.decode()
    return int(done.stdout.decode().rsplit(" ", 1)[-1])


def wait_for_server(env: dict) -> int:
    """The pid of the server once it answers (one started in the background by a normal run). Waits by connecting
    to its socket, which it binds once loaded, then asks `server status` once: each status is a process start."""
    sockets = Path(env["XDG_RUNTIME_DIR"]) / "mini-agent"

    def answering() -> bool:
        for path in sockets.glob("*.sock"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(str(path))  # a killed server's socket file is left behind: it refuses
                    return True
                except OSError:
                    continue
        return False

    def running() -> int | None:
        found = status(env)
        return int(found["pid"]) if found.get("warm server", "").startswith("running") else None

    eventually(answering, "a warm server coming up")
    return eventually(running, "the warm server answering its status", interval=0.2)


def servers_in(runtime_dir: str | Path) -> list[int]:
    """The pids of the servers whose socket is in `runtime_dir` (from /proc: a socket says no pid)."""
    marker = f"XDG_RUNTIME_DIR={Path(runtime_dir)}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"mini_agent.serve.server" in cmdline and marker in environ:
            found.append(int(entry.name))
    return found


def stop_servers_in(runtime_dir: str | Path) -> None:
    """Stop every server whose socket is in `runtime_dir`."""
    for pid in servers_in(runtime_dir):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def installed(expression: str) -> str:
    """`expression` evaluated by the installed command's interpreter, away from the checkout: `python -m pytest`
    puts the checkout first on sys.path, and in CI (a non-editable install) that is another copy, whose
    installation key, socket name and files are not the ones the command uses."""

    code = f"import mini_agent, mini_agent.warm.paths as paths, os; print({expression})"
    with tempfile.TemporaryDirectory() as neutral:
        done = subprocess.run([sys.executable, "-c", code], cwd=neutral, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def runtime(tmp_path):
    """A runtime directory of the test's own: for a test that starts, stops, kills or outdates its server."""
    directory = private_runtime_dir()
    yield directory
    stop_servers_in(directory)
    shutil.rmtree(directory, ignore_errors=True)  # hundreds left in /tmp slow the sandbox's scan of it


@pytest.fixture(scope="module")
def shared_runtime():
    """One runtime directory, and so one server, for the tests that only need a server to be running: starting
    one is the slow part of each. A test's own home, model and project travel with each invocation."""
    directory = private_runtime_dir()
    yield directory
    stop_servers_in(directory)
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def server_env(api, tmp_path, shared_runtime):
    """The environment of a warm run served by the module's server (started by the first test that asks)."""
    env = environment(api, tmp_path, shared_runtime, warm=True)
    env["MINI_AGENT_SERVER_IDLE"] = "600"  # the module's tests come one after another, however loaded the machine
    start(env)
    return env


def environment(api, tmp_path: Path, runtime: Path, warm: bool) -> dict:
    # Not CI's own variable either: in CI without a terminal no server is started (entry.worth_a_server).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_")) and k != "CI"}
    env.update(
        ANTHROPIC_BASE_URL=api.url if api else "http://127.0.0.1:9",
        ANTHROPIC_API_KEY=TEST_KEY,
        ANTHROPIC_MODEL="claude-test",
        NO_COLOR="1",
        TERM="xterm",
        MINI_AGENT_RETRY_BASE_DELAY="0.01",
        MINI_AGENT_MAX_RETRIES="2",
        MINI_AGENT_HOME=str(tmp_path / "home"),
        XDG_RUNTIME_DIR=str(runtime),
        MINI_AGENT_SERVER_IDLE="120",
    )
    if not warm:
        env["MINI_AGENT_NO_SERVER"] = "1"
    return env


def served(env: dict) -> int:
    return int(status(env).get("invocations served", "0"))
