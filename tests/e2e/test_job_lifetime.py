"""Background jobs at a real process's boundaries: the REPL's /jobs lists and stops them, and whatever way the
session ends (/exit, kill -9 of the agent) no job outlives it."""

from __future__ import annotations

import signal

import pytest
from support import alive, eventually, process_running, start_cli
from support.fake_api import answer, tool_use
from support.repl import finish, spawn

pytestmark = pytest.mark.e2e
PROMPT = "›"


def pid_of(marker) -> int:
    return int(eventually(lambda: marker.exists() and marker.read_text().strip(), "the job's pid"))


def test_jobs_lists_and_stops_a_job_and_the_repls_exit_kills_the_rest(api, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    api.script(
        answer(
            tool_use(
                "bash", {"command": f"echo $$ > {first}; : '\033]0;pwn\007'; exec sleep 600", "run_in_background": True}
            )
        ),
        answer(tool_use("bash", {"command": f"echo $$ > {second}; exec sleep 601", "run_in_background": True})),
        answer("Both started."),
    )
    child = spawn(api, tmp_path, "--permission-mode", "bypass")
    child.expect(PROMPT)
    child.sendline("start two jobs")
    child.expect("Both started")
    child.expect(PROMPT)
    one, two = pid_of(first), pid_of(second)
    child.sendline("/jobs")
    child.expect(r"(\w{4})  running .*outside the sandbox  echo .*first; : '(.*)'; exec sleep 600")
    job, shown = child.match.group(1), child.match.group(2)
    assert shown == "⟨ESC⟩]0;pwn⟨BEL⟩"  # the command's control characters named, never sent to the terminal
    child.expect(r"running .*exec sleep 601")
    child.expect(PROMPT)
    child.sendline(f"/jobs stop {job}")
    child.expect(f"Stopped job {job}")
    eventually(lambda: not alive(one), "the stopped job gone")
    assert alive(two)
    child.sendline("/jobs")
    child.expect(rf"{job}  killed \(15\)")
    child.expect(PROMPT)
    child.sendline("/exit")
    assert finish(child) == 0
    eventually(lambda: not alive(two), "the job still running at /exit gone with the session")


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_job_dies_when_the_agent_is_killed(api, tmp_path, signum):
    """kill -9 leaves the agent no time for anything, SIGTERM and SIGHUP end it without its atexit: the watchdog's
    helper takes the job."""
    marker = tmp_path / "pid"
    api.script(
        answer(tool_use("bash", {"command": f"echo $$ > {marker}; exec sleep 600", "run_in_background": True})),
        answer(tool_use("bash", {"command": "exec sleep 599"})),  # the agent busy when it is killed
    )
    agent = start_cli(api, tmp_path, "-p", "go", "--permission-mode", "bypass")
    try:
        pid = pid_of(marker)
        eventually(lambda: process_running("sleep", "599"), "the second call running")
        agent.send_signal(signum)
        agent.wait()
        eventually(lambda: not alive(pid), f"the job killed after the agent's {signum.name}")
    finally:
        agent.kill()
        agent.wait()
        api.replies.clear()
