"""Background jobs through the tools, on real processes: bash's run_in_background, job_output (new output, a
filter, waiting for a line), stop_job (the whole tree), caps, and the sandbox level a job was decided for."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from support import PATIENCE, alive, eventually

from mini_agent.safety.sandbox import Confinement
from mini_agent.tools import default_tools
from mini_agent.tools.base import ToolContext, ToolResult

TOOLS = default_tools()


@pytest.fixture
def ctx(tmp_path: Path):
    context = ToolContext(cwd=tmp_path.resolve(), data_dir=tmp_path / "data")
    yield context
    if context.jobs is not None:
        context.jobs.stop_all(grace=0.5)


def call(ctx: ToolContext, name: str, **arguments) -> ToolResult:
    return TOOLS.call(name, arguments, ctx)


def start(ctx: ToolContext, command: str) -> str:
    result = call(ctx, "bash", command=command, run_in_background=True)
    assert not result.is_error, result.content
    found = re.search(r"Started background job (\w+)", result.content)
    assert found, result.content
    return found.group(1)


def held(ctx: ToolContext, tmp_path: Path, command: str) -> str:
    """A job that waits for the test to let it go (so its first output is not in the start's result), let go."""
    gate = tmp_path / "go"
    job = start(ctx, f"while [ ! -e {gate} ]; do sleep 0.02; done; {command}")
    gate.touch()
    return job


def pids_in(path: Path, count: int) -> list[int]:
    def written() -> list[int] | None:
        numbers = path.read_text().split() if path.exists() else []
        return [int(n) for n in numbers] if len(numbers) >= count else None

    return eventually(written, f"{count} pids in {path.name}")


def test_a_job_runs_on_after_the_call_its_output_is_read_as_it_comes_filtered_then_it_is_stopped(ctx, tmp_path):
    gate = tmp_path / "go"
    job = start(
        ctx,
        f"while [ ! -e {gate} ]; do sleep 0.02; done; echo 'noise 1'; echo 'READY on 8000';"
        " echo 'noise 2'; exec sleep 600",
    )
    first = call(ctx, "job_output", job_id=job)
    assert first.content == f"(no new output)\nJob {job} is running." and first.exit_code is None
    gate.touch()
    ready = call(ctx, "job_output", job_id=job, wait=PATIENCE, filter="READY")
    assert "READY on 8000" in ready.content and "noise" not in ready.content  # other lines consumed, not shown
    assert "noise" not in call(ctx, "job_output", job_id=job).content
    stopped = call(ctx, "stop_job", job_id=job)
    assert f"Stopped job {job}" in stopped.content and "stopped by the model" in stopped.content
    assert stopped.killed_by == "SIGTERM" and not ctx.jobs.get(job).running
    assert ctx.jobs.take_endings() == []  # the model stopped it: no note about it later


def test_stopping_a_job_kills_what_left_its_group_with_setsid_and_a_double_fork(ctx, tmp_path):
    pids = tmp_path / "pids"
    job = start(
        ctx,
        f"setsid sh -c 'echo $$ >> {pids}; exec sleep 600' & "
        f"( ( sh -c 'echo $$ >> {pids}; exec sleep 600' & ) & ) ; "
        f"echo $$ >> {pids}; exec sleep 600",
    )
    escaped = pids_in(pids, 3)
    assert all(alive(pid) for pid in escaped)
    call(ctx, "stop_job", job_id=job)
    eventually(lambda: not any(alive(pid) for pid in escaped), "every process of the job gone")


def test_a_job_that_ends_on_its_own_is_reported_once_with_its_exit_code_and_its_leftovers_are_killed(ctx, tmp_path):
    pids = tmp_path / "pids"
    job = held(ctx, tmp_path, f"sleep 600 & echo $! > {pids}; echo bye; exit 3")
    leftover = pids_in(pids, 1)[0]
    ended = eventually(lambda: ctx.jobs.take_endings(), "the job's end")
    assert [item.id for item in ended] == [job] and ended[0].returncode == 3
    eventually(lambda: not alive(leftover), "the job's background child killed with it")
    assert ctx.jobs.take_endings() == []
    result = call(ctx, "job_output", job_id=job)
    assert "bye" in result.content and "exit code: 3" in result.content and result.exit_code == 3


def test_a_read_is_capped_like_any_command_output_head_and_tail_kept(ctx, tmp_path):
    job = held(ctx, tmp_path, "seq 1 40000; echo END")
    eventually(lambda: not ctx.jobs.get(job).running, "the job's end")
    result = call(ctx, "job_output", job_id=job)
    assert result.content.startswith("1\n2\n") and "END" in result.content
    assert len(result.content) < 32_000 and "characters omitted" in result.content


def test_the_spool_keeps_the_newest_output_of_a_job_that_prints_forever(tmp_path):
    from mini_agent.processes.jobs import JobTable

    table = JobTable(tmp_path / "data", spool_cap=64 * 1024)
    try:
        job = table.start("yes", ["sh", "-c", "yes spam"], dict(os.environ), tmp_path, None, "none")
        eventually(lambda: job.spool.end > 1 << 20, "a megabyte of output")
        spool_file = job.spool.path
        assert spool_file.stat().st_size <= 64 * 1024  # the disk holds the cap, not what was printed
        assert not spool_file.is_relative_to(tmp_path / "project") and (spool_file.stat().st_mode & 0o077) == 0
        chunk = table.read(job)
        assert chunk.dropped > 0 and 0 < len(chunk.data) <= 64 * 1024 and b"spam\nspam\n" in chunk.data
    finally:
        table.stop_all(grace=0)
    assert not spool_file.exists()


def test_a_filter_that_backtracks_forever_is_refused_rather_than_hanging(ctx, tmp_path, monkeypatch):
    from mini_agent.tools import jobs

    monkeypatch.setattr(jobs, "FILTER_TIME", 0.05)
    job = held(ctx, tmp_path, "printf 'a%.0s' $(seq 1 40); echo '!'")
    eventually(lambda: not ctx.jobs.get(job).running, "the job's end")
    result = call(ctx, "job_output", job_id=job, filter="(a|aa)+$")
    assert result.is_error and "filter took longer" in result.content


def test_a_guessed_job_id_names_only_this_sessions_jobs(ctx, tmp_path):
    other = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data2")
    job = start(other, "exec sleep 600")
    try:
        result = call(ctx, "stop_job", job_id=job)
        assert result.is_error and "No background job" in result.content and other.jobs.get(job).running
    finally:
        other.jobs.stop_all(grace=0)


def test_a_job_runs_in_the_sandbox_level_its_command_was_decided_for(forced, ctx, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    ctx.cwd = project
    ctx.confinement = Confinement("workspace-write", project, home=home, shared_temp_dirs=())
    pids = project / "pids"
    job = held(
        ctx,
        tmp_path,
        f"echo inside > {project}/made; echo outside > {home}/made 2>&1 || echo REFUSED; "
        f"( ( sh -c 'echo $$ >> {pids}; exec sleep 600' & ) & ); exec sleep 600",
    )
    ctx.confinement = None
    assert ctx.jobs.get(job).sandbox == "workspace-write"
    refused = call(ctx, "job_output", job_id=job, wait=PATIENCE, filter="REFUSED")
    assert "REFUSED" in refused.content and not (home / "made").exists() and (project / "made").exists()
    daemon = pids_in(pids, 1)
    call(ctx, "stop_job", job_id=job)
    if forced == "bubblewrap":  # the pid namespace's number is not the host's: the job's tree is gone, that is all
        assert not ctx.jobs.get(job).running
    else:
        eventually(lambda: not alive(daemon[0]), "the confined job's double-forked daemon killed")
