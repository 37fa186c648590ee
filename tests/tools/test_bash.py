"""The bash tool on real subprocesses: output, exit codes, cwd, timeouts, truncation, Ctrl-C."""

from __future__ import annotations

import itertools
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import HERE, PATIENCE, eventually

from mini_agent.processes.run import BoundedOutput
from mini_agent.tools.base import ToolContext, ToolRegistry
from mini_agent.tools.bash import bash

HARNESS = HERE / "interrupt_harness.py"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path.resolve())


def run(ctx: ToolContext, command: str, **arguments) -> str:
    result = ToolRegistry([bash]).call("bash", {"command": command, **arguments}, ctx)
    assert not result.is_error, result.content
    return result.content


def process_state(pid: int) -> str | None:
    """The /proc state letter of a process, None if it does not exist."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def is_gone(pid: int) -> bool:
    return process_state(pid) in (None, "Z")


def live_members(group: int) -> list[int]:
    """Pids of the non-zombie processes in a process group."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def kill_quietly(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_output_and_exit_code(ctx):
    assert run(ctx, "echo hello") == "hello\nexit code: 0"
    assert run(ctx, "echo oops; exit 3") == "oops\nexit code: 3"
    assert run(ctx, "true") == "(no output)\nexit code: 0"


def test_killed_shell_reports_the_signal(ctx):
    assert run(ctx, "kill -KILL $$").endswith("exit code: 137 (killed by SIGKILL)")


def test_stdout_and_stderr_interleave_in_order(ctx):
    assert run(ctx, "echo a; echo b >&2; echo c; echo d >&2") == "a\nb\nc\nd\nexit code: 0"


def test_description_does_not_change_behaviour(ctx):
    assert run(ctx, "echo hi", description="Say hi") == "hi\nexit code: 0"


def test_cwd_persists_across_calls(ctx, tmp_path):
    sub = tmp_path.resolve() / "sub dir"
    sub.mkdir()
    assert "Working directory is now" in run(ctx, "cd 'sub dir'")
    assert ctx.cwd == sub
    assert run(ctx, "pwd") == f"{sub}\nexit code: 0"


def test_cwd_follows_a_command_that_exits_with_an_error(ctx, tmp_path):
    (tmp_path / "sub").mkdir()
    assert run(ctx, "cd sub && exit 4").endswith("exit code: 4")
    assert ctx.cwd == tmp_path.resolve() / "sub"


def test_a_symlinked_cwd_is_kept_when_the_command_does_not_move(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    ctx = ToolContext(cwd=tmp_path / "link")
    assert run(ctx, "pwd -P") == f"{(tmp_path / 'real').resolve()}\nexit code: 0"
    assert ctx.cwd == tmp_path / "link"


def test_failed_cd_keeps_the_old_cwd(ctx, tmp_path):
    output = run(ctx, "cd missing")
    assert "No such file or directory" in output and output.endswith("exit code: 1")
    assert ctx.cwd == tmp_path.resolve()
    assert run(ctx, "pwd") == f"{tmp_path.resolve()}\nexit code: 0"


def test_a_directory_removed_by_the_command_keeps_the_old_cwd(ctx, tmp_path):
    run(ctx, "mkdir gone && cd gone && rmdir ../gone")
    assert ctx.cwd == tmp_path.resolve()


def test_cwd_that_vanished_between_calls_is_an_error(tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    ctx = ToolContext(cwd=gone)
    gone.rmdir()
    result = ToolRegistry([bash]).call("bash", {"command": "pwd"}, ctx)
    assert result.is_error and "no longer exists" in result.content


def test_stdin_is_closed(ctx):
    output = run(ctx, "cat; read line || echo eof", timeout=20)
    assert output == "eof\nexit code: 0"


def test_pagers_and_prompts_are_disabled(ctx):
    assert run(ctx, 'echo "$PAGER|$GIT_PAGER|$MANPAGER|$GIT_TERMINAL_PROMPT"') == "cat|cat|cat|0\nexit code: 0"


def test_timeout_kills_the_whole_group_and_keeps_partial_output(ctx, tmp_path):
    command = "bash -c 'sleep 60 & echo $! > grandchild.pid; wait' & echo partial; sleep 60"
    output = run(ctx, command, timeout=1)
    assert output.startswith("partial\n")
    assert "Command timed out after 1 s; process group killed." in output
    assert "killed by SIGTERM" in output
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    try:
        assert eventually(lambda: is_gone(grandchild)), f"grandchild {grandchild} survived the timeout"
    finally:
        kill_quietly(grandchild)


def test_timeout_escalates_to_sigkill(ctx, tmp_path):
    command = "trap '' TERM; echo $$ > shell.pid; echo stubborn; while :; do sleep 0.1; done"
    output = run(ctx, command, timeout=1)
    assert output.startswith("stubborn\n") and "timed out" in output
    assert output.endswith("exit code: 137 (killed by SIGKILL)")
    assert is_gone(int((tmp_path / "shell.pid").read_text()))


def test_long_output_keeps_head_and_tail_with_a_hint(ctx):
    output = run(ctx, "seq 1 100000")
    full = "".join(f"{n}\n" for n in range(1, 100001))
    omitted = len(full) - 30_000
    assert output.startswith(full[:15_000])
    assert f"[... {omitted} characters omitted ...]" in output
    assert full[-15_000:].rstrip("\n") in output
    assert f'<system_hint type="truncated" omitted_chars="{omitted}">' in output
    assert "read_file" in output and output.endswith("exit code: 0")
    assert len(output) < 31_000


def test_output_at_the_limit_is_not_truncated(ctx):
    exact = run(ctx, "head -c 30000 /dev/zero | tr '\\0' x")
    assert exact == "x" * 30_000 + "\nexit code: 0"
    over = run(ctx, "head -c 30001 /dev/zero | tr '\\0' x")
    assert 'omitted_chars="1"' in over


def test_huge_output_keeps_memory_bounded(ctx):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    output = run(ctx, "yes | head -c 1000000000", timeout=300)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert output.endswith("exit code: 0")
    assert 'omitted_chars="999970000"' in output
    assert len(output) < 31_000
    assert (after - before) * 1024 < 500 * 2**20  # ru_maxrss is in KiB on Linux


def test_background_process_does_not_block_and_keeps_running(ctx, tmp_path):
    output = run(ctx, "sleep 30 & echo $! > bg.pid; echo started", timeout=20)
    background = int((tmp_path / "bg.pid").read_text())
    try:
        assert output == "started\nexit code: 0"
        assert not is_gone(background)
    finally:
        kill_quietly(background)


def test_chatty_background_process_survives_the_call(ctx, tmp_path):
    command = "(while :; do echo tick; echo t >> ticks; sleep 0.02; done) & echo $! > bg.pid; echo started"
    output = run(ctx, command, timeout=20)
    writer = int((tmp_path / "bg.pid").read_text())
    ticks = tmp_path / "ticks"
    try:
        assert "started" in output and "timed out" not in output and output.endswith("exit code: 0")
        at_return = ticks.stat().st_size
        # Many writes after our return (each echo to the closed pipe first): SIGPIPE would have ended the loop.
        eventually(lambda: is_gone(writer) or ticks.stat().st_size >= at_return + 2 * 20, "twenty more ticks")
        assert not is_gone(writer)
    finally:
        kill_quietly(writer)


def test_ctrl_c_kills_the_group_and_propagates(tmp_path):
    harness = subprocess.Popen(
        [sys.executable, str(HARNESS), str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        pgid_file = tmp_path / "pgid"
        assert eventually(pgid_file.exists), "the harness never started the command"
        group = int(pgid_file.read_text())
        assert eventually(lambda: len(live_members(group)) >= 2)  # the shell and its sleep
        sleeper = [pid for pid in live_members(group) if pid != group]
        harness.send_signal(signal.SIGINT)
        stdout, stderr = harness.communicate(timeout=PATIENCE)
    finally:
        harness.kill()
    assert harness.returncode == 130, stderr
    assert stdout == "interrupted\n"
    assert eventually(lambda: not live_members(group)), f"left running: {live_members(group)}"
    assert all(is_gone(pid) for pid in sleeper)


def test_invalid_utf8_is_replaced(ctx):
    assert run(ctx, r"printf '\xff\xfeok\n'") == "\ufffd\ufffdok\nexit code: 0"


def test_character_split_across_reads_is_decoded(ctx):
    assert run(ctx, r"printf '\xc3'; sleep 0.3; printf '\xa9\n'") == "\u00e9\nexit code: 0"


@pytest.mark.parametrize(
    "arguments, problem",
    [
        ({"command": "echo hi", "timeout": 601}, "less than or equal to 600"),
        ({"command": "echo hi", "timeout": 0}, "greater than or equal to 1"),
        ({"command": "   \n"}, "command is empty"),
        ({}, "missing required parameter 'command'"),
    ],
)
def test_invalid_arguments_are_rejected(ctx, arguments, problem):
    result = ToolRegistry([bash]).call("bash", arguments, ctx)
    assert result.is_error and problem in result.content


def test_guidance_and_risk():
    assert bash.risk == "exec"
    assert "read_file" in bash.guidance and "timeout" in bash.guidance and "30,000" in bash.guidance
    assert bash.input_schema["properties"]["timeout"]["maximum"] == 600


@given(data=st.binary(max_size=300), cuts=st.lists(st.integers(0, 300), max_size=8))
def test_bounded_output_is_the_decoded_head_and_tail(data, cuts):
    output = BoundedOutput(head_limit=20, tail_limit=30)
    edges = [0, *sorted(cut for cut in cuts if cut <= len(data)), len(data)]
    for start, end in itertools.pairwise(edges):
        output.feed(data[start:end])
    output.feed(b"", final=True)
    text = data.decode("utf-8", errors="replace")
    assert output.total == len(text)
    if len(text) <= 50:
        assert output.omitted == 0 and output.head + output.tail == text
    else:
        assert output.head == text[:20] and output.tail == text[-30:]
        assert output.omitted == len(text) - 50


def test_commands_see_the_users_request_verbatim_for_scripts_and_sub_agents(tmp_path):
    ctx = ToolContext(cwd=tmp_path, request='Fix «it» — and don\'t touch "tests/"; $HOME stays')
    result = ToolRegistry([bash]).call("bash", {"command": 'printf %s "$MINI_AGENT_REQUEST"'}, ctx)
    assert result.content.startswith('Fix «it» — and don\'t touch "tests/"; $HOME stays')


@given(returncode=st.integers(min_value=-64, max_value=255))
def test_the_exit_line_states_the_numbers_the_result_carries(returncode):
    from mini_agent.tools.exit_line import exit_line, shell_exit

    code, killed_by = shell_exit(returncode)
    assert code == (returncode if returncode >= 0 else 128 - returncode)
    assert (killed_by is not None) == (returncode < 0)
    assert exit_line(code, killed_by) == f"exit code: {code}" + (f" (killed by {killed_by})" if killed_by else "")


def test_a_command_result_carries_its_exit_code_as_a_number_whatever_its_output_says(tmp_path):
    ctx = ToolContext(cwd=tmp_path)
    claims = ToolRegistry([bash]).call("bash", {"command": "echo 'exit code: 7'"}, ctx)
    assert (claims.exit_code, claims.killed_by) == (0, None) and claims.content == "exit code: 7\nexit code: 0"
    failed = ToolRegistry([bash]).call("bash", {"command": "exit 3"}, ctx)
    assert (failed.exit_code, failed.killed_by) == (3, None)
    killed = ToolRegistry([bash]).call("bash", {"command": "kill -KILL $$"}, ctx)
    assert (killed.exit_code, killed.killed_by) == (137, "SIGKILL")
    assert ToolRegistry([bash]).call("bash", {"command": ""}, ctx).exit_code is None  # refused: nothing ran


def test_commands_leave_the_temp_dirs_listing_alone_after_the_first(tmp_path, monkeypatch):
    """Each command's pwd file lives in one private directory of the process, not in /tmp itself: a /tmp that
    changed with every command made the sandbox scan it afresh (for service sockets) before each one."""
    import tempfile

    from mini_agent.tools import bash as bash_module

    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setattr(bash_module, "_pwd_dirs", {})
    ctx = ToolContext(cwd=tmp_path)
    ToolRegistry([bash]).call("bash", {"command": "cd / && true"}, ctx)
    listing, state = sorted(os.listdir(temp)), os.stat(temp)
    for _ in range(3):
        assert not ToolRegistry([bash]).call("bash", {"command": "cd / && true"}, ctx).is_error
    after = os.stat(temp)
    assert sorted(os.listdir(temp)) == listing and [name[:15] for name in listing] == ["mini-agent-pwd-"]
    assert (after.st_mtime_ns, after.st_ctime_ns) == (state.st_mtime_ns, state.st_ctime_ns)
    assert os.listdir(temp / listing[0]) == []  # each command's own file is gone with it
