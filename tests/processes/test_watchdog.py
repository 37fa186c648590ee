"""What bash calls start dies with the agent, however the agent dies: real processes, real kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from support import BIN, HERE, PATIENCE, TEST_KEY, alive, eventually
from support.fake_api import answer, tool_use

HARNESS = HERE / "bash_harness.py"
# A loop in the command's own group, and one that left it with setsid (found by the token in its environment).
# The watchdog is for commands run outside the sandbox (inside, the PID namespace ends them with the call).
OUTSIDE_THE_SANDBOX = ("--dangerously-skip-permissions",)
LOOPS = (
    "(while :; do echo x >> ticks; sleep 0.05; done) & echo $! > loop.pid; "
    "setsid sh -c 'echo $$ > escapee.pid; while :; do echo y >> ticks2; sleep 0.05; done' & "
)


def pids(directory: Path, *names: str) -> list[int]:
    assert eventually(lambda: all((directory / name).exists() and (directory / name).read_text() for name in names))
    return [int((directory / name).read_text()) for name in names]


def working_in(directory: Path) -> list[int]:
    """Every live process whose working directory is `directory`: each loop, and each `sleep` it started."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.readlink(entry / "cwd") == str(directory.resolve()):
                found.append(int(entry.name))
        except OSError:
            continue  # gone meanwhile, or not ours to look at
    return found


def assert_all_gone(directory: Path, processes: list[int]) -> None:
    try:
        assert eventually(lambda: not any(alive(pid) for pid in processes)), [p for p in processes if alive(p)]
        # Not one process is left that could still append to the tick files (the loops' own children included).
        assert eventually(lambda: not working_in(directory)), working_in(directory)
    finally:
        for pid in processes:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def agent_environment(api) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=TEST_KEY, ANTHROPIC_MODEL="claude-test")
    env["MINI_AGENT_NO_SERVER"] = "1"
    return env


def test_kill_9_of_the_agent_mid_call_kills_everything_its_commands_started(api, tmp_path: Path) -> None:
    command = LOOPS + "echo $$ > shell.pid; exec sleep 600"
    api.script(answer(tool_use("bash", {"command": command})))
    env = agent_environment(api) | {"MINI_AGENT_HOME": str(tmp_path / "home")}
    agent = subprocess.Popen(
        [str(BIN), "-p", "start the loops", *OUTSIDE_THE_SANDBOX],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        processes = pids(tmp_path, "loop.pid", "escapee.pid", "shell.pid")
        assert all(alive(pid) for pid in processes)
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=PATIENCE)
    finally:
        agent.kill()
    assert_all_gone(tmp_path, processes)


def test_background_processes_end_when_a_run_ends_normally(run_installed, api, tmp_path: Path) -> None:
    api.script(answer(tool_use("bash", {"command": LOOPS + "echo started"})), answer("Started them."))

    done = run_installed(["-p", "start the loops", *OUTSIDE_THE_SANDBOX], api)

    assert done.returncode == 0, done.stderr
    assert_all_gone(tmp_path, pids(tmp_path, "loop.pid", "escapee.pid"))


def test_in_process_a_killed_helper_is_replaced_and_earlier_calls_are_found_by_their_token(tmp_path: Path) -> None:
    harness = subprocess.Popen(
        [sys.executable, str(HARNESS), str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        harness.stdin.write("(while :; do echo x >> ticks; sleep 0.05; done) & echo $! > loop.pid\n")
        harness.stdin.flush()
        first_helper = int(harness.stdout.readline().split()[1])
        assert first_helper > 1, "no helper was started"  # and never kill(0): that is our own process group
        os.kill(first_helper, signal.SIGKILL)  # the agent lives on without its helper
        assert eventually(lambda: not alive(first_helper))
        escapee = "setsid sh -c 'echo $$ > escapee.pid; while :; do echo y >> ticks2; sleep 0.05; done' &\n"
        harness.stdin.write(escapee)
        harness.stdin.flush()
        second_helper = int(harness.stdout.readline().split()[1])
        processes = pids(tmp_path, "loop.pid", "escapee.pid")
        assert second_helper != first_helper and alive(second_helper)
        harness.send_signal(signal.SIGKILL)
        harness.wait(timeout=PATIENCE)
    finally:
        harness.kill()
    assert_all_gone(tmp_path, processes)
    assert eventually(lambda: not alive(second_helper)), "the helper lingers after doing its job"
