"""The warm start, with real processes: the installed command, a real server in a private runtime directory,
the loopback model. Whatever the path, an invocation gives the same output, exit code and session files. Who may
use the server: test_warm_isolation.py."""

from __future__ import annotations

import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from support import (
    BIN,
    PATIENCE,
    alive,
    children_of,
    ctrl_c_while_running,
    eventually,
    parent_of,
    process_running,
    script_an_edit_to_approve,
)
from support.fake_api import answer, tool_use
from support.repl import finish, spawn
from support.warm import (
    PR_SET_NO_NEW_PRIVS,
    command,
    environment,
    installed,
    served,
    servers_in,
    start,
    status,
    wait_for_server,
)

import mini_agent

VARIABLE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d"), "<when>"),
    (re.compile(r"Time: \d\d:\d\d"), "Time: <hh:mm>"),
    (re.compile(r"\b\d\d:\d\d:\d\d\b"), "<hh:mm:ss>"),
    (re.compile(r"toolu_\d+"), "toolu_<n>"),  # the loopback model numbers its tool calls across the test
    (re.compile(r"msg_\d+"), "msg_<n>"),  # and its messages
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),  # records' uuid
    (re.compile(r'"(duration_ms|duration_api_ms)": ?\d+'), r'"\1": 0'),
    (re.compile(r"\b[0-9a-f]{8}\b"), "<id>"),
    (re.compile(r"\d+(\.\d+)? ?(ms|s)\b"), "<t>"),
]


def normal(text: str) -> str:
    for pattern, replacement in VARIABLE:
        text = pattern.sub(replacement, text)
    return text


def sessions(home: Path) -> list[str]:
    return [normal(path.read_text()) for path in sorted(home.rglob("sessions/**/*.jsonl"))]


CASES = {
    "text": (["-p", "say hi"], None),
    "json": (["-p", "say hi", "--output-format", "json"], None),
    "stream-json": (["-p", "say hi", "--output-format", "stream-json"], None),
    "piped": ([], b"the task, from a pipe"),
    "piped beside -p": (["-p", "review this"], b"some diff\n"),
    "usage error": (["--output-format", "yaml", "-p", "x"], None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_warm_path_gives_what_the_normal_path_gives(api, tmp_path, shared_runtime, server_env, case):
    args, piped = CASES[case]
    results = {}
    for warm in (False, True):
        home = tmp_path / ("warm" if warm else "cold")
        env = environment(api, home, shared_runtime, warm)
        before = served(env) if warm else 0
        if case != "usage error":
            api.script(answer(tool_use("read_file", {"path": "notes.txt"})), answer("Hi: the notes say 42."))
        (tmp_path / "notes.txt").write_text("42\n")
        stdin = {"input": piped} if piped is not None else {"stdin": subprocess.DEVNULL}
        done = command(args, env, cwd=tmp_path, **stdin)
        if warm:
            assert served(env) == before + 1  # it really went through the server
        results[warm] = (done.returncode, normal(done.stdout.decode()), normal(done.stderr.decode()), sessions(home))
    assert results[True] == results[False]
    assert results[True][0] == (2 if case == "usage error" else 0)


def test_ctrl_c_reaches_the_worker_and_its_command(api, tmp_path, server_env):
    env = server_env
    api.script(answer(tool_use("bash", {"command": "exec sleep 60.6161"})))
    child = subprocess.Popen(
        [str(BIN), "-p", "wait", "--yes"], env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    # SIGINT to the client in the foreground, as a terminal's Ctrl-C does
    assert "Interrupted" in ctrl_c_while_running(child, "sleep", "60.6161")


def test_an_approval_on_the_terminal_works_through_the_warm_path(api, tmp_path, server_env):
    env = server_env
    before = served(env)
    target = script_an_edit_to_approve(api, tmp_path)
    child = pexpect.spawn(
        str(BIN),
        ["-p", "change it"],
        cwd=str(tmp_path),
        env=env,
        dimensions=(40, 120),
        timeout=PATIENCE,
        encoding="utf-8",
    )
    child.expect("needs your approval")
    child.expect(r"Allow\? \[y/n/e\]")
    child.send("y")
    child.expect("Done.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert target.read_text() == "new line\n"
    assert served(env) == before + 1


def test_a_killed_or_outdated_server_is_never_used_the_run_falls_back_and_starts_a_new_one(api, tmp_path, runtime):
    # The package this test's servers run is a copy of its own, first on their path (PYTHONPATH, which the command
    # hands to the server it starts): making it outdated by touching a file must not make every other server of the
    # installation outdated too (the run's shared one, which other workers' tests are using meanwhile).
    package = tmp_path / "package"
    installed_package = Path(installed("os.path.dirname(mini_agent.__file__)"))
    shutil.copytree(installed_package, package / "mini_agent", ignore=shutil.ignore_patterns("__pycache__"))
    if (installed_package.parent / "SYSTEM_PROMPT.md").exists():  # a checkout's: the wheel has it in the package
        shutil.copy2(installed_package.parent / "SYSTEM_PROMPT.md", package)
    env = {**environment(api, tmp_path, runtime, warm=True), "PYTHONPATH": str(package)}
    killed = start(env)
    os.kill(killed, signal.SIGKILL)
    api.script(answer("Still works."))
    done = command(["-p", "hi"], env, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"Still works.\n", b"")
    outdated = wait_for_server(env)
    assert outdated != killed
    source = package / "mini_agent" / "warm" / "__init__.py"
    stamp = source.stat()
    os.utime(source, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))
    api.script(answer("Fresh."))
    done = command(["-p", "hi"], env, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout) == (0, b"Fresh.\n")
    eventually(lambda: not alive(outdated), "the outdated server leaving instead of serving")
    assert wait_for_server(env) != outdated  # and the run started a new one from the current code


def test_no_server_is_started_or_used_when_turned_off(api, tmp_path, runtime):
    env = environment(api, tmp_path, runtime, warm=False)
    api.script(answer("One."))
    assert command(["-p", "hi"], env, cwd=tmp_path, stdin=subprocess.DEVNULL).returncode == 0
    env = environment(api, tmp_path, runtime, warm=True)
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "config.toml").write_text("warm_start = false\n")
    api.script(answer("Two."))
    assert command(["-p", "hi"], env, cwd=tmp_path, stdin=subprocess.DEVNULL).stdout == b"Two.\n"
    # A run that starts a server has spawned it before it exits (the server then waits for the run to end before
    # loading): so no server process for this runtime directory now means none was started. No clock needed.
    assert servers_in(runtime) == [] and status(env)["warm server"] == "not running"


def test_no_server_is_started_where_it_cannot_pay_off(api, tmp_path, runtime):
    """A CI job without a terminal ends before a next run could use a server; a one-off subcommand needs none."""
    env = environment(api, tmp_path, runtime, warm=True)
    api.script(answer("One."))
    done = command(["-p", "hi"], {**env, "CI": "true"}, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert (done.returncode, done.stdout) == (0, b"One.\n")
    assert command(["config"], env, cwd=tmp_path, stdin=subprocess.DEVNULL).returncode == 0
    # As above: a run that starts a server has spawned it before it exits.
    assert servers_in(runtime) == []
    api.script(answer("Two."))
    assert command(["-p", "hi"], env, cwd=tmp_path, stdin=subprocess.DEVNULL).stdout == b"Two.\n"
    assert servers_in(runtime) != []  # the same run outside CI does start one


def test_server_status_and_stop(tmp_path, runtime):
    env = environment(None, tmp_path, runtime, warm=True)
    assert status(env)["warm server"] == "not running"
    pid = start(env)
    found = status(env)
    assert found["warm server"].startswith("running") and int(found["pid"]) == pid
    assert found["socket"].startswith(str(runtime)) and float(found["memory (RSS)"].split()[0]) > 10
    done = command(["server", "stop"], env)
    assert done.stdout.decode().strip() == f"warm server: stopped (pid {pid})"
    assert not alive(pid) and status(env)["warm server"] == "not running"


def test_version_and_help_answer_without_typer_and_help_matches_typer(tmp_path, runtime):
    env = environment(None, tmp_path, runtime, warm=True)
    env["COLUMNS"] = "100"
    assert command(["--version"], env).stdout == f"mini-agent {mini_agent.__version__}\n".encode()
    typer_help = subprocess.run(
        [str(BIN.parent / "python"), "-m", "mini_agent", "--help"], env=env, capture_output=True
    ).stdout
    first = command(["--help"], env)
    cached = list((tmp_path / "home" / "cache").glob("help-*.txt"))
    second = command(["--help"], env)
    assert first.stdout == second.stdout == typer_help and len(cached) == 1
    trace = command(["--help"], {**env, "PYTHONVERBOSE": "1"}).stderr.decode()
    assert "import 'typer" not in trace and "import 'anthropic" not in trace
    assert json.loads(json.dumps(status(env)))["warm server"] == "not running"  # neither started a server


def test_a_sandboxed_mini_agent_runs_in_its_sandbox_not_in_the_server(api, tmp_path, server_env):
    """A command the agent runs may itself run mini-agent: with no_new_privs set it is never handed over."""
    env = server_env
    before = served(env)
    api.script(answer("Ran here."))
    confined = f"import ctypes, os; ctypes.CDLL(None).prctl({PR_SET_NO_NEW_PRIVS}, 1, 0, 0, 0); "
    confined += f"os.execv({str(BIN)!r}, [{str(BIN)!r}, '-p', 'hi'])"
    done = subprocess.run(
        [sys.executable, "-c", confined], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True
    )
    assert (done.returncode, done.stdout) == (0, b"Ran here.\n"), done.stderr
    assert served(env) == before


def _unshare_works() -> bool:
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="cannot make a network namespace here")
def test_a_run_in_another_network_namespace_runs_there_not_in_the_server(api, tmp_path, server_env):
    env = server_env
    before = served(env)
    api.script(answer("Reached from the server's network."))
    done = subprocess.run(
        ["unshare", "-n", str(BIN), "-p", "hi"], env=env, cwd=tmp_path, capture_output=True, timeout=PATIENCE
    )
    # Inside the namespace the loopback model does not exist: the run must fail to reach it, as a run of its own.
    assert done.returncode != 0 and b"Reached" not in done.stdout
    assert b"Cannot connect" in done.stderr
    assert served(env) == before
    api.replies.clear()


def test_a_run_with_other_resource_limits_runs_on_its_own(api, tmp_path, server_env):
    import resource

    env = server_env
    before = served(env)
    api.script(answer("Fine."))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lower = min(soft, 512) - 1

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (lower, hard))

    done = subprocess.run(
        [str(BIN), "-p", "hi"], env=env, cwd=tmp_path, capture_output=True, timeout=PATIENCE, preexec_fn=limited
    )
    assert (done.returncode, done.stdout) == (0, b"Fine.\n")
    assert served(env) == before  # a worker forked from the server would have had the server's limits


def test_the_worker_dies_with_its_supervisor(api, tmp_path, runtime):
    env = environment(api, tmp_path, runtime, warm=True)
    server = start(env)
    marker = tmp_path / "started"
    api.script(answer(tool_use("bash", {"command": f"touch {marker}; sleep 120"})), answer("never"))
    client = subprocess.Popen(
        [str(BIN), "-p", "go", "--allow", "bash"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    try:
        watcher = os.pidfd_open(client.pid)
        while not marker.exists():  # the command runs: the worker is at work
            assert client.poll() is None, client.stderr.read().decode()
            select.select([watcher], [], [], 0.05)
        supervisor = next(pid for pid in children_of(server))
        (worker,) = children_of(supervisor)
        os.kill(supervisor, signal.SIGKILL)
        gone = os.pidfd_open(worker)
        ready, _, _ = select.select([gone], [], [], PATIENCE)  # an event, not a clock: the pidfd turns readable at exit
        assert ready, "the worker outlived its supervisor"
        assert client.wait(timeout=PATIENCE) == 1
    finally:
        client.kill()
        client.wait()
        api.replies.clear()


def test_a_pty_run_goes_through_the_shared_warm_server_with_the_tests_own_home(api, tmp_path):
    """The suite's pty runs are warm (support/shared_server.py): if the hand-over quietly fell back to a cold
    start, every such test would still pass and the suite would be ~2 s of CPU a run slower. The run's command
    is a descendant of the shared server, not of the process the terminal started (the server is shared by every
    test worker, so its count of runs served says nothing about this one)."""
    from support.shared_server import warm_env
    from support.warm import status

    for attempt in range(2):  # a server can be replaced between the status and the run (an upgrade, here a
        # test that touched the installed package): a second try; a hand-over that never works fails both
        server = int(status(warm_env(dict(os.environ))).get("pid", 0))
        api.script(answer(tool_use("bash", {"command": "exec sleep 61.7171"})), answer("Warm hello."))
        child = spawn(api, tmp_path, "-p", "hi", "--yes")
        command = eventually(lambda: process_running("sleep", "61.7171"), "the run's command starting")
        lineage = [command]
        while lineage[-1] > 1:
            lineage.append(parent_of(lineage[-1]) or 1)
        os.kill(command, signal.SIGKILL)
        child.expect("Warm hello.")
        assert finish(child) == 0
        if server in lineage or attempt == 1:
            break
    assert server in lineage and child.pid not in lineage, (server, child.pid, lineage)
    assert list((tmp_path / "mini-agent-home").rglob("*.jsonl")), "the session went to the test's own home"
