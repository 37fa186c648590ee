"""The bash tool: one shell command per call, in the session's working directory, which a `cd` carries over."""

from __future__ import annotations

import atexit
import contextlib
import os
import shlex
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from mini_agent.processes.run import BoundedOutput, Finished, child_environment, run_captured, run_launched
from mini_agent.tools._arguments import CommandText
from mini_agent.tools.base import ToolContext, ToolError, ToolInterrupted, ToolResult, tool
from mini_agent.tools.exit_line import exit_line, output_text, shell_exit
from mini_agent.xmltext import system_hint

if TYPE_CHECKING:
    from mini_agent.safety.sandbox.gitguard import GitChanges

OUTPUT_LIMIT = 30_000
"""Characters of output returned to the model; beyond it the head and tail halves are kept."""

NON_INTERACTIVE_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "cat",
    "AWS_PAGER": "",
    "LESS": "-FRX",
    "GIT_TERMINAL_PROMPT": "0",
}
"""Nothing waits for a keypress: stdin is closed, so a pager or a password prompt would only hang or fail."""

GUIDANCE = """
Runs one shell command with `bash -c` and returns its stdout and stderr interleaved, followed by the exit code.
Prefer read_file, write_file and edit_file over cat, head, sed, awk or echo redirections for reading and
editing files. The working directory persists between calls (a `cd` carries over); environment variables
and shell state do not. stdin is closed and pagers are disabled, so never run interactive commands (editors,
REPLs, `git rebase -i`, prompts): use non-interactive flags such as `-y`, `--yes`, `--no-edit`, `-m`. Set
`timeout` (seconds, up to 600, default 120) for builds, test suites and installs; on timeout the command and
everything it started are killed. Output beyond 30,000 characters is cut in the middle: redirect big outputs
to a file and read it with read_file, or filter with grep, head or tail. For a server, a watcher or anything
that must keep running, set `run_in_background: true` (not `&`, which ends with the call inside the sandbox): you
get a job id at once; read its new output with job_output (wait for a line such as "listening" with its `wait`
and `filter`), end it with stop_job. Jobs end with the session; a job that ends on its own is reported at your
next step. A job's server on 127.0.0.1 can be fetched with web_fetch when the job runs outside the sandbox
or in one with network (sandboxed commands have no network of their own). Quote paths that contain spaces. The
user's request for this turn, in their own words, is in `$MINI_AGENT_REQUEST` for any script or sub-agent you
start. Commands that run without the user's approval run in an OS sandbox: read-only ones
cannot write anything but `$TMPDIR`, others can write only inside the project and temp dirs, and neither can
reach the network or read credentials. When a result carries a sandbox hint and the command really needs more,
call it again with `outside_sandbox: true`: that asks the user, who may refuse.
"""
REQUEST_ENV_LIMIT = 32_768
"""Characters of the request put in the environment; far below the kernel's per-string limit."""
SANDBOX_ALLOWS = {"read-only": "no writes but $TMPDIR", "workspace-write": "writes only in the project and temp dirs"}


def _check(ctx: ToolContext, command: str, **_: object) -> None:
    if not command.strip():
        raise ToolError("command is empty. Pass the shell command to run, e.g. `ls -la`.")
    if not ctx.cwd.is_dir():
        raise ToolError(f"The working directory {ctx.cwd} no longer exists. Use an absolute path, e.g. `cd /path`.")


@tool(risk="exec", guidance=GUIDANCE, precheck=_check, alias="Bash", key_argument="command")
def bash(
    ctx: ToolContext,
    command: CommandText,
    timeout: Annotated[int, Field(ge=1, le=600)] = 120,
    description: str | None = None,
    outside_sandbox: bool = False,
    run_in_background: bool = False,
) -> ToolResult:
    """Run a shell command with bash in the current working directory and return its output and exit code.

    stdout and stderr come back interleaved in the order they were written, followed by a line with the exit
    code. The working directory persists between calls: after `cd sub`, later commands run in sub. stdin is
    closed, so interactive programs get end-of-file instead of waiting for input. Output longer than 30,000
    characters keeps its beginning and end and says how much was cut.

    Args:
        command: The bash command to run, e.g. `pytest -x tests/test_api.py` or `git status --short`.
        timeout: Seconds before the command and all the processes it started are killed (1 to 600).
        description: A few words saying what the command does, shown to the user, e.g. "Run the unit tests".
        outside_sandbox: Ask the user to run this command outside the OS sandbox. Only after the sandbox blocked
            it (the result said so) and the task needs the write or the network access it was denied.
        run_in_background: Start the command as a background job and return its job id at once (for servers,
            watchers, long builds). Read its output with job_output, end it with stop_job; it ends with the session.
    """
    _check(ctx, command)
    if run_in_background:
        from mini_agent.tools.jobs import start_job

        return start_job(ctx, command, _environment(ctx.request), ctx.confinement)
    output = BoundedOutput(OUTPUT_LIMIT // 2, OUTPUT_LIMIT // 2)
    descriptor, pwd_file = tempfile.mkstemp(prefix="pwd-", dir=_pwd_dir())
    os.close(descriptor)
    try:
        finished, changed, git = _run(command, ctx.cwd, Path(pwd_file), timeout, output, ctx.request, ctx.confinement)
        new_cwd = _final_directory(Path(pwd_file))
    except KeyboardInterrupt:
        # The group is already killed (run_captured); what it printed is the model's best clue to how far it got.
        raise ToolInterrupted(output_text(output)) from None
    finally:
        os.unlink(pwd_file)
    moved = new_cwd is not None and new_cwd != ctx.cwd.resolve()  # a symlinked cwd is not a move
    if moved:
        ctx.cwd = new_cwd
    report = _report(output, finished, timeout, new_cwd if moved else None)
    if changed:  # the mechanism could not keep these read-only (Landlock): the human must know, and so must the model
        shown = ", ".join(str(path) for path in changed)
        report += f"\nWarning: this command changed protected files the sandbox could not keep read-only: {shown}"
    if git:  # the human hears it too: git runs these files' programs in their own terminal later
        if ctx.notify is not None:
            ctx.notify(git.notice())
        report += f"\nWarning: {git.notice()}"
    code, killed_by = shell_exit(finished.returncode)
    return ToolResult(report + _sandbox_hint(report, finished, ctx.confinement), exit_code=code, killed_by=killed_by)


def _run(
    command: str, cwd: Path, pwd_file: Path, timeout: int, output: BoundedOutput, request: str, confinement
) -> tuple[Finished, tuple[Path, ...], GitChanges | None]:
    """Run the command, confined when asked; returns how it ended, the protected paths it changed anyway, and
    what it did to the git dir beyond ordinary work (its control files already put back)."""
    # The trap shares the command's first line so bash's line numbers in error messages stay the user's own;
    # it writes the shell's final directory on any exit, and leaves the exit status untouched.
    tracked = f"trap 'pwd -P >| {shlex.quote(str(pwd_file))} 2>/dev/null' EXIT; {command}"
    env = _environment(request)
    argv, launch = ["bash", "-c", tracked], None
    if confinement is not None:
        from mini_agent.safety.sandbox import SandboxUnavailable, confine

        try:
            launch = confine(argv, env, cwd, confinement, writable=(pwd_file,))
        except SandboxUnavailable as exc:  # never run outside instead: that is the human's call
            raise ToolError(f"Not run: the OS sandbox could not start ({exc}).") from None
        argv, env = launch.argv, launch.env
    try:
        if launch is None:
            return run_captured(argv, cwd, env, timeout, output), (), None
        finished = run_launched(launch, cwd, timeout, output)
        return finished, launch.protected_changes(), launch.git_changes()
    except FileNotFoundError as exc:
        raise ToolError(f"Could not start bash: {exc}. Is bash installed and on PATH?") from None
    finally:
        if launch is not None:
            launch.cleanup()


def _environment(request: str) -> dict[str, str]:
    """A command's environment: ours without the agent's credentials, nothing interactive, the user's request."""
    env = child_environment()
    env.update(NON_INTERACTIVE_ENV, MINI_AGENT_REQUEST=request[:REQUEST_ENV_LIMIT].replace("\0", ""))
    return env


def _sandbox_hint(report: str, finished: Finished, confinement) -> str:
    """One hint when the sandbox blocked something, so the model knows why and how to ask for more."""
    if confinement is None or finished.returncode == 0:
        return ""
    from mini_agent.safety.sandbox import blocked

    what = blocked(report, finished.returncode, confinement)
    if not what:
        return ""
    allowed = SANDBOX_ALLOWS[confinement.level] + ("" if confinement.network else ", no network")
    text = (
        f"{what} The command ran in the {confinement.level} sandbox ({allowed})"
        ". If the task needs this, call bash again with the same command and outside_sandbox: true; that asks the "
        "user. Do not work around the sandbox by other means."
    )
    return "\n" + system_hint("sandbox", text, level=confinement.level)


def _final_directory(pwd_file: Path) -> Path | None:
    """The directory the shell ended in, if it reported one that still exists."""
    try:
        reported = pwd_file.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not reported:
        return None
    directory = Path(reported)
    return directory if directory.is_dir() else None


def _report(output: BoundedOutput, finished: Finished, timeout: int, new_cwd: Path | None) -> str:
    parts = [output_text(output) or "(no output)"]
    if finished.timed_out:
        parts.append(f"Command timed out after {timeout} s; process group killed.")
    if new_cwd is not None:
        parts.append(f"Working directory is now {new_cwd}")
    parts.append(exit_line(*shell_exit(finished.returncode)))
    return "\n".join(parts)


_pwd_dirs: dict[int, str] = {}
_pwd_lock = threading.Lock()


def _pwd_dir() -> str:
    """This process's private directory (0700, in the temp dir) for its commands' pwd files. A file made in /tmp
    itself for each command changed /tmp's listing every time, so what the sandbox remembers of /tmp's listing
    (its services' sockets: safety/sandbox/listings.py) was never used, and a /tmp of many entries was scanned
    again before every command. Per process: a warm worker is a fork and makes its own."""
    with _pwd_lock:
        made = _pwd_dirs.get(os.getpid())
        if made is None or not os.path.isdir(made):
            made = _pwd_dirs[os.getpid()] = tempfile.mkdtemp(prefix="mini-agent-pwd-")
            atexit.register(_remove_pwd_dir, os.getpid(), made)
        return made


def _remove_pwd_dir(pid: int, path: str) -> None:
    if os.getpid() == pid:  # not a fork's exit: the directory is its parent's
        with contextlib.suppress(OSError):
            os.rmdir(path)
