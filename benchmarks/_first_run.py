"""A first run on a machine, which finds no warm server and starts one for the next run: does starting it slow the
run itself? The same cold `mini-agent -p go --yes` five-step run (read_file, bash `echo`, twice each, an answer),
interleaved: starting a server (a fresh private runtime dir, so none is found) and with MINI_AGENT_NO_SERVER=1.
Start → first request, start → exit, and the run's own CPU time (the server is detached: not counted). Each
server is stopped as soon as its run has ended, so that its preload never overlaps the next measurement.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from _common import FakeAnthropicAPI, Row, answer, child_env, failed_row, median, mini_agent_command, seconds, tool_use

SERVER_CPU_TARGET = 0.1
"""CPU seconds the server may use while the run that started it is going: its interpreter's start and its wait.
The pass mark is this, not the time differences, which a busy shared machine moves by more than they are."""


def first_run_rows(runs: int) -> list[Row]:
    name = "First run starting a warm server vs MINI_AGENT_NO_SERVER=1"
    target = f"server's CPU during the run < {seconds(SERVER_CPU_TARGET)}"
    try:
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-first-") as tmp:
            base = Path(tmp)
            (base / "cwd").mkdir()
            env = child_env(base / "home")
            _run(env, base, starts_server=False)  # untimed: caches
            starting, plain = [], []
            for index in range(runs):  # interleaved, so a busy moment slows both kinds alike
                starting.append(_run(env, base, starts_server=True, tag=str(index)))
                plain.append(_run(env, base, starts_server=False, tag=str(index)))
    except Exception as exc:
        return [failed_row(name, target, str(exc))]
    differences = [
        f"{label} {seconds(median([s[column] for s in starting]))} vs {seconds(median([p[column] for p in plain]))} "
        f"({median([s[column] - p[column] for s, p in zip(starting, plain, strict=True)]):+.3f} s)"
        for label, column in (("first request", 0), ("exit", 1))
    ]
    server = median([s[3] for s in starting])
    result = (
        f"server's CPU during the run {seconds(server)}; {'; '.join(differences)}; run's CPU "
        f"{seconds(median([s[2] for s in starting]))} vs {seconds(median([p[2] for p in plain]))}"
    )
    return [Row(f"{name}: start → first request, start → exit", result, target, server < SERVER_CPU_TARGET)]


def _run(env: dict, base: Path, starts_server: bool, tag: str = "warm-up") -> tuple[float, float, float, float]:
    """One five-step run: (start → first request, start → exit, its CPU time, the CPU time of the server it
    started, until the run's end)."""
    runtime = base / f"run-{tag}-{starts_server}"
    runtime.mkdir(mode=0o700)
    run_env = {**env, "XDG_RUNTIME_DIR": str(runtime), "MINI_AGENT_NO_SERVER": "" if starts_server else "1"}
    cwd = base / "cwd"
    (cwd / "notes.txt").write_text("42\n")
    calls = [("read_file", {"path": "notes.txt"}), ("bash", {"command": "echo one"})] * 2
    api = FakeAnthropicAPI().start()
    try:
        api.script(*[answer(tool_use(tool, arguments)) for tool, arguments in calls], answer("Done: 42."))
        run_env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="dummy", ANTHROPIC_MODEL="claude-test")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        done = subprocess.run(
            [mini_agent_command(), "-p", "go", "--yes"], env=run_env, cwd=cwd, stdin=subprocess.DEVNULL,
            capture_output=True,
        )  # fmt: skip
        ended = time.monotonic()
        server_cpu = _stop_servers(str(runtime))  # before its preload, which begins as the run ends, counts
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"exit {done.returncode}: {done.stderr.decode()[-300:]}")
        api.assert_complete()
        posts = [r for r in api.requests if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"]
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        return posts[0].at - started, ended - started, cpu, server_cpu
    finally:
        api.stop()
        _stop_servers(str(runtime))


def _stop_servers(runtime: str) -> float:
    """Kill the servers started with this runtime dir (found by their environment: they are detached); the CPU
    time they had used."""
    mark = f"XDG_RUNTIME_DIR={runtime}".encode()
    used = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as file:
                if mark not in file.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
            os.kill(int(entry), signal.SIGKILL)
            used += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        except (OSError, IndexError, ValueError):
            continue
    return used
