"""`/jobs`: the session's background jobs (id, state, age, output, command), and `/jobs stop ID` to kill one.

What a job's command holds is shown through the terminal sanitiser (ui/terminal_text.py), like everything the
model wrote."""

from __future__ import annotations

import time

from rich.markup import escape as escape_markup

from mini_agent.ui.terminal_text import visible

STOP_WORDS = ("stop", "kill")


def jobs_command(repl, argument: str) -> None:
    words = argument.split()
    table = repl.agent.ctx.jobs
    if words and words[0] in STOP_WORDS:
        _stop(repl, table, words[1:])
        return
    if words:
        repl.console.print("[yellow]Usage: /jobs, or /jobs stop ID[/]")
        return
    jobs = table.jobs() if table is not None else []
    if not jobs:
        repl.console.print("[dim]No background jobs in this session.[/]")
        return
    now = time.time()
    for job in jobs:  # a command may name a secret's value: masked, as in the tool lines
        # One line per job, wrapped by the terminal: a long command is never broken into pieces a copy keeps.
        repl.console.print(escape(repl.agent.secrets.mask(job_line(job, now))), highlight=False, soft_wrap=True)


def job_line(job, now: float) -> str:
    """One job: `ab12  running   3m  1.2 KB  sandbox workspace-write  npm run dev`."""
    if job.running:
        state = "running"
    else:
        state = f"exit {job.returncode}" if job.returncode >= 0 else f"killed ({-job.returncode})"
    age = _age(now - job.started)
    where = "outside the sandbox" if job.sandbox == "none" else f"sandbox {job.sandbox}"
    command = " ".join(job.command.split())
    return f"{job.id}  {state:<11} {age:>4}  {_size(job.spool.end):>8}  {where}  {command}"


def _stop(repl, table, ids: list[str]) -> None:
    from mini_agent.processes.jobs import UnknownJob

    if len(ids) != 1:
        repl.console.print("[yellow]Usage: /jobs stop ID (/jobs lists them)[/]")
        return
    try:
        job = table.get(ids[0]) if table is not None else None
    except UnknownJob:
        job = None
    if job is None:
        repl.console.print(f"[yellow]No background job {escape(ids[0])} in this session.[/]")
        return
    if not job.running:
        repl.console.print(f"[dim]Job {escape(job.id)} had already ended.[/]")
        return
    table.stop(job, "the user")
    repl.console.print(f"Stopped job {escape(job.id)}.")


def _age(seconds: float) -> str:
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def _size(count: int) -> str:
    for unit, size in (("MB", 1 << 20), ("KB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"


def escape(text: str) -> str:
    """Not read as rich markup, control characters named."""
    return escape_markup(visible(text))
