"""Background jobs as the model sees them: bash's `run_in_background` starts one (`start_job`), `job_output` reads
what it printed since the last read, `stop_job` kills it (Claude Code's BashOutput/TaskOutput and KillShell).

The job table itself (processes, spools, sockets) is processes/jobs.py. A read returns what any command's output
returns: at most 30,000 characters, head and tail kept, through the same secret masking and terminal sanitiser
(the caller's). The model's filter is a regular expression run with a time limit (the `regex` module): a pattern
that backtracks forever must not hang the agent.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from mini_agent.processes.run import BoundedOutput
from mini_agent.tools.base import ToolContext, ToolError, ToolResult, tool
from mini_agent.tools.exit_line import exit_line, output_text, shell_exit

if TYPE_CHECKING:
    from mini_agent.processes.jobs import Job, JobTable

OUTPUT_LIMIT = 30_000
FIRST_MOMENT = 0.1
"""Seconds a new job is given to fail at once (a typo, a port in use) before its id is returned."""
FILTER_TIME = 2.0
"""Seconds the model's filter may take over one read's lines, all together."""

GUIDANCE = """
job_output returns a background job's new output since your last read (bash with `run_in_background: true`
started it), and whether it still runs or its exit code. To wait for a server to come up, pass `wait` (seconds)
and `filter` (a regular expression, e.g. `Serving|listening|error`): it returns as soon as a matching line
appears or the job ends. Lines that do not match the filter are consumed. Do not poll in a loop without `wait`.
"""
STOP_GUIDANCE = """
stop_job kills a background job and everything it started, as a timeout kills a command. Stop the jobs you no
longer need (a server once its checks are done); every job is stopped when the session ends anyway.
"""


def start_job(ctx: ToolContext, command: str, env: dict[str, str], confinement) -> ToolResult:
    """Start `command` as a background job of the session, confined as the policy decided; the job id at once."""
    jobs = ctx.job_table()
    confine = None
    if confinement is not None:

        def confine(argv, job_env):
            from mini_agent.safety.sandbox import SandboxUnavailable
            from mini_agent.safety.sandbox import confine as sandbox

            try:
                return sandbox(argv, job_env, ctx.cwd, confinement)
            except SandboxUnavailable as exc:  # never run outside instead: that is the human's call
                raise ToolError(f"Not run: the OS sandbox could not start ({exc}).") from None

    level = confinement.level if confinement is not None else "none"
    try:
        job = jobs.start(command, ["bash", "-c", command], env, ctx.cwd, confine, level)
    except FileNotFoundError as exc:
        raise ToolError(f"Could not start bash: {exc}. Is bash installed and on PATH?") from None
    job.done.wait(FIRST_MOMENT)
    where = f"in the {level} sandbox" if level != "none" else "outside the sandbox"
    if confinement is not None and not confinement.network:
        where += ", without network (its servers cannot be fetched)"
    head = f"Started background job {job.id} {where}."
    return _report(jobs, job, None, head)


@tool(risk="read", guidance=GUIDANCE, alias="BashOutput", key_argument="job_id")
def job_output(
    ctx: ToolContext,
    job_id: str,
    filter: str | None = None,
    wait: Annotated[float, Field(ge=0, le=600)] = 0,
) -> ToolResult:
    """Read a background job's output since the last read, and whether it is still running or its exit code.

    Args:
        job_id: The id bash returned when it started the job.
        filter: A regular expression; only the lines of new output that match it are returned (the others are
            consumed all the same), e.g. `error|warning`.
        wait: Seconds to wait for new (matching) output when there is none yet; returns early when it appears
            or the job ends. 0 returns at once.
    """
    jobs = ctx.job_table()
    job = _job(jobs, job_id)
    pattern = _compile(filter)
    deadline = time.monotonic() + wait
    while True:
        text = _new_output(jobs, job, pattern)
        left = deadline - time.monotonic()
        if text or not job.running or left <= 0:
            return _report(jobs, job, text, None)
        job.wait_for_output(min(left, 1.0))
        if ctx.cancelled.is_set():
            return _report(jobs, job, text, None)


@tool(risk="read", guidance=STOP_GUIDANCE, alias="KillShell", key_argument="job_id")
def stop_job(ctx: ToolContext, job_id: str) -> ToolResult:
    """Stop a background job: its command and every process it started are killed (SIGTERM, then SIGKILL).

    Args:
        job_id: The id bash returned when it started the job.
    """
    jobs = ctx.job_table()
    job = _job(jobs, job_id)
    if not job.running:
        return _report(jobs, job, None, f"Job {job.id} had already ended.")
    jobs.stop(job, "the model")
    return _report(jobs, job, None, f"Stopped job {job.id}.")


def describe(job: Job) -> str:
    """A job as a permission question names it."""
    return f"background job {job.id}'s server ({_short(job.command)})"


def ending(job: Job) -> str:
    """What the model and the human are told of a job that ended without the model stopping it."""
    code, killed_by = shell_exit(job.returncode if job.returncode is not None else -1)
    how = f"was stopped by {job.stopped_by}" if job.stopped_by else "ended"
    text = f"Background job {job.id} ({_short(job.command)}) {how}: {exit_line(code, killed_by)}."
    unread = job.spool.end - job.read_offset
    if unread:
        text += f" {unread} bytes of its output are unread (job_output {job.id})."
    return " ".join([text, *(f"Warning: {warning}" for warning in job.warnings)])


def _short(command: str, limit: int = 80) -> str:
    line = " ".join(command.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def serving(ctx: ToolContext, url: str) -> Job | None:
    """The running job of this session that alone listens where the loopback URL points, if one does."""
    from urllib.parse import urlsplit

    from mini_agent.safety.netaddr import LOOPBACK, host_risk
    from mini_agent.tools.web_connect import resolve

    if ctx.jobs is None:
        return None
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname or "", parts.port or (443 if parts.scheme.lower() == "https" else 80)
        if host_risk(host) != LOOPBACK:
            return None
        addresses = resolve(host, port)
    except (ValueError, OSError):
        return None
    return next(filter(None, (ctx.jobs.serving(address, port) for address in addresses)), None)


def _job(jobs: JobTable, job_id: str) -> Job:
    from mini_agent.processes.jobs import UnknownJob

    try:
        return jobs.get(job_id)
    except UnknownJob:
        known = ", ".join(job.id for job in jobs.jobs()) or "none"
        raise ToolError(f"No background job {job_id!r} in this session (its jobs: {known}).") from None


def _compile(text: str | None):
    if not text:
        return None
    import regex

    try:
        return regex.compile(text)
    except regex.error as exc:
        raise ToolError(f"filter is not a valid regular expression: {exc}.") from None


def _new_output(jobs: JobTable, job: Job, pattern) -> str:
    """The job's unread output (with its filter, complete lines only while it runs); the cursor moves past it."""
    chunk = jobs.read(job)
    data = chunk.data
    if pattern is not None and job.running and b"\n" in data:
        keep = data.rindex(b"\n") + 1  # a line still being written is matched once it is whole
        job.read_offset -= len(data) - keep
        data = data[:keep]
    elif pattern is not None and job.running:
        job.read_offset -= len(data)
        data = b""
    text = data.decode("utf-8", errors="replace")
    if chunk.dropped:
        text = f"[{chunk.dropped} bytes of older output were dropped: the job's spool keeps its newest output]\n{text}"
    if pattern is not None and text:
        text = _matching(pattern, text)
    return text


def _matching(pattern, text: str) -> str:
    deadline = time.monotonic() + FILTER_TIME
    kept = []
    for line in text.splitlines():
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise TimeoutError
            if pattern.search(line, timeout=left):
                kept.append(line)
        except TimeoutError:
            raise ToolError(
                f"filter took longer than {FILTER_TIME:g} s over the new output; use a simpler expression."
            ) from None
    return "\n".join(kept)


def _report(jobs: JobTable, job: Job, text: str | None, head: str | None) -> ToolResult:
    """The output (head and tail kept, like bash's), then the job's state."""
    if text is None:
        text = _new_output(jobs, job, None)
    output = BoundedOutput(OUTPUT_LIMIT // 2, OUTPUT_LIMIT // 2)
    output.feed(text.encode("utf-8", errors="surrogateescape"), final=True)
    parts = [head] if head else []
    parts.append(output_text(output) or "(no new output)")
    if job.running:
        parts.append(f"Job {job.id} is running.")
        return ToolResult("\n".join(parts))
    job.reported = True  # the model has heard of its end
    code, killed_by = shell_exit(job.returncode if job.returncode is not None else -1)
    stopped = f" (stopped by {job.stopped_by})" if job.stopped_by else ""
    parts.append(f"Job {job.id} has ended{stopped}; {exit_line(code, killed_by)}")
    parts += [f"Warning: {warning}" for warning in job.warnings]
    return ToolResult("\n".join(parts), exit_code=code, killed_by=killed_by)
