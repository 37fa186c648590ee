"""Constants and helpers the tests share, importable by name from any test directory.

(`from conftest import ...` resolves to whichever conftest module was imported first, which differs between
`pytest tests` and `pytest tests/tools tests`; this module has one name.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TEST_KEY = "sk-ant-test-SECRET-0123456789"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
"""The repository's root."""
FIXTURES = ROOT / "tests" / "fixtures"
"""Inputs from public projects, kept in the repository: a fresh clone needs nothing beside it."""
MCP_SERVER = HERE / "mcp_server.py"
"""A real MCP server built with the `mcp` SDK, run as `python MCP_SERVER`."""
PATIENCE = float(os.environ.get("MINI_AGENT_TEST_PATIENCE", "600"))
"""How long a test waits for something that should happen before calling it a failure. Not a budget: what a
test waits for arrives within a second or two on an idle machine; this only ends a test that hangs, and is long
enough that a machine at load average 16 never reaches it."""
BIN = Path(sys.executable).parent / "mini-agent"


def eventually(condition, what: str = "the condition", patience: float = PATIENCE, interval: float = 0.02):
    """Wait until `condition()` is truthy and return its value; fail, naming `what`, after `patience` seconds.

    The one way a test waits for something another process or thread does: it polls an event (a file, a pid,
    a request), never sleeps a fixed time."""
    import time

    give_up = time.monotonic() + patience
    while not (value := condition()):
        if time.monotonic() > give_up:
            raise AssertionError(f"{what} did not happen within {patience:g} s")
        time.sleep(interval)
        interval = min(interval * 1.5, 0.5)
    return value


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def parent_of(pid: int) -> int | None:
    """The parent pid of a process, from /proc; None once it is gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def children_of(pid: int) -> list[int]:
    """The pids of a process's children, from /proc."""
    return [
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and parent_of(int(entry.name)) == pid
    ]


def process_running(*argv: str) -> int | None:
    """The pid of a live process whose command line is exactly `argv`, searched in /proc.

    For commands run in the sandbox: inside its PID namespace `$$` is not the pid the host sees."""
    wanted = "\0".join(argv).encode() + b"\0"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "cmdline").read_bytes() == wanted and alive(int(entry.name)):
                return int(entry.name)
        except OSError:
            continue
    return None


class ScriptedKeys:
    """Key presses from a string, one character each, for the approval question (`ask_on_terminal(keys=...)`)."""

    def __init__(self, typed: str) -> None:
        self.typed = list(typed)

    def discard_typeahead(self) -> None:
        pass

    def key(self) -> str:
        if not self.typed:
            raise EOFError
        return self.typed.pop(0)

    def line(self) -> str:
        text = "".join(self.typed)
        taken, _, rest = text.partition("\n")
        self.typed = list(rest)
        return taken


def scripted_agent(
    settings,
    registry=None,
    emit=None,
    confirm=None,
    *,
    prompt: str = "You are a test agent.",
    session=None,
    keeper=None,
):
    """The agent as tests build it: the real provider against the loopback model (retries without sleeping), every
    built-in tool unless `registry` says otherwise, and a yes to every question unless `confirm` says otherwise."""
    from mini_agent.agent import Agent
    from mini_agent.conversation import Session
    from mini_agent.model import AnthropicProvider
    from mini_agent.safety.permissions import Allow
    from mini_agent.tools import default_tools
    from mini_agent.tools.base import ToolContext

    return Agent(
        AnthropicProvider(settings, sleep=lambda seconds: None),
        default_tools() if registry is None else registry,
        settings,
        session or Session(),
        ToolContext(cwd=settings.cwd),
        prompt,
        emit or (lambda event: None),
        confirm or (lambda request: Allow()),
        keeper=keeper,
    )


def start_cli(api, cwd: Path, *args: str, home: Path | None = None, warm: bool = False) -> subprocess.Popen:
    """The installed command against the loopback model, as a process a test can signal (pipes for its output).
    Cold (the process is the agent) unless `warm`: then handed to the test process's warm server."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=TEST_KEY, ANTHROPIC_MODEL="claude-test")
    env["MINI_AGENT_NO_SERVER"] = "1"  # the normal path; tests of the warm start say so
    if home is not None:
        env["MINI_AGENT_HOME"] = str(home)
    if warm:
        from support.shared_server import warm_env

        env = warm_env(env)
    return subprocess.Popen(
        [str(BIN), *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def ctrl_c_while_running(process: subprocess.Popen, *argv: str) -> str:
    """Wait until a process with exactly `argv` runs (a command the agent started), send the agent SIGINT, and
    check that the run ends with 130 and the command is gone. The run's stderr."""
    import signal

    def started() -> int | None:
        assert process.poll() is None, process.communicate()[1].decode()
        return process_running(*argv)

    running = eventually(started, f"{argv} starting")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 130, err
    eventually(lambda: not alive(running), f"{argv} ending")
    return err.decode()


def script_an_edit_to_approve(api, cwd: Path) -> Path:
    """file.txt with "old line", and a model that reads it, edits it to "new line" (a change that asks in
    default mode) and says it is done: the file, for the test to check after answering the question."""
    from support.fake_api import answer, tool_use

    target = cwd / "file.txt"
    target.write_text("old line\n")
    api.script(
        answer(tool_use("read_file", {"path": "file.txt"})),
        answer(tool_use("edit_file", {"path": "file.txt", "old_string": "old line", "new_string": "new line"})),
        answer("Done."),
    )
    return target
