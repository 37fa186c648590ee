"""The git_state source: branch, upstream, changed files and recent commits, from real `git` runs side by side."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from mini_agent.context.blocks import Skip, TurnInput
from mini_agent.processes.run import child_environment
from mini_agent.processes.tree import Lineage

GIT_TIMEOUT = 2.0
"""Seconds for all git runs together; the gatherer stops waiting sooner, this only reaps a stuck git."""
MAX_CHANGES = 30
COMMITS_SHOWN = 5
SUBJECT_CHARS = 80

_CONFIG = [
    *("-c", "color.ui=false", "-c", "core.quotePath=false", "-c", "status.relativePaths=false"),
    *("-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"),
]
"""Plain output whatever the user's config says: no colour, UTF-8 names unquoted, paths from the repository root;
and none of the programs a repository's own config can make `git status` run (core.fsmonitor)."""
_STATUS = ["status", "--porcelain=v2", "--branch", "--untracked-files=normal"]
_LOG = ["log", f"-n{COMMITS_SHOWN}", "--format=%h %s", "--no-show-signature"]
_TOPLEVEL = ["rev-parse", "--show-toplevel"]


def git_state(inp: TurnInput) -> str:
    git = shutil.which("git")
    if git is None:
        raise Skip("git is not installed (not found on PATH)")
    cwd = Path(os.path.abspath(inp.cwd))
    if not _may_be_in_a_repository(cwd):
        raise Skip(f"not a git repository: {cwd}")
    status, log, toplevel = _run_together(git, cwd, [_STATUS, _LOG, _TOPLEVEL])
    if status.returncode != 0:
        raise Skip(_failure_reason(status.stderr, cwd))
    parsed = parse_status(status.stdout)
    commits = log.stdout.splitlines() if log.returncode == 0 and parsed.oid != "(initial)" else []
    root = toplevel.stdout.strip() if toplevel.returncode == 0 else ""
    return render(parsed, commits, root)


def _may_be_in_a_repository(cwd: Path) -> bool:
    """False only where git would find no repository: nothing names one in the environment, and neither the
    directory nor one above it (on its real path, which git walks) holds a `.git` or is a git directory itself
    (a bare repository: HEAD, objects/, refs/). There `git status` would only say so, and every turn outside a
    repository would start three processes (~15 ms, ~50 ms the first time) to hear it."""
    if any(name in os.environ for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")):
        return True
    try:
        here = Path(os.path.realpath(cwd))
        if not here.is_dir():
            return True  # git says what is wrong with it
        for directory in (here, *here.parents):
            if os.path.lexists(directory / ".git") or (
                (directory / "HEAD").is_file() and (directory / "objects").is_dir() and (directory / "refs").is_dir()
            ):
                return True
    except OSError:
        return True
    return False


@dataclass
class Status:
    oid: str = ""
    """The commit HEAD points at, or "(initial)" before the first commit."""
    head: str = ""
    """The branch name, or "(detached)"."""
    upstream: str = ""
    ahead_behind: tuple[int, int] | None = None
    changes: list[str] = field(default_factory=list)
    """One `git status --short` style line per changed or untracked path."""


def parse_status(output: str) -> Status:
    """Parse `git status --porcelain=v2 --branch` (without -z) into the parts shown."""
    status = Status()
    for line in output.splitlines():
        if line.startswith("# branch.oid "):
            status.oid = line.removeprefix("# branch.oid ")
        elif line.startswith("# branch.head "):
            status.head = line.removeprefix("# branch.head ")
        elif line.startswith("# branch.upstream "):
            status.upstream = line.removeprefix("# branch.upstream ")
        elif line.startswith("# branch.ab "):
            ahead, behind = line.removeprefix("# branch.ab ").split()
            status.ahead_behind = (int(ahead), -int(behind))
        elif change := _change_line(line):
            status.changes.append(change)
    return status


def _change_line(line: str) -> str:
    # v2 puts the path after a fixed number of space-separated fields, so spaces inside the path survive.
    kind = line[:1]
    if kind == "?":
        return f"?? {line[2:]}"
    fields_before_path = {"1": 8, "2": 9, "u": 10}.get(kind)
    if fields_before_path is None:
        return ""  # headers and ignored files ("!")
    parts = line.split(" ", fields_before_path)
    code = parts[1].replace(".", " ")  # v2 writes "." where the short format writes a space
    if kind == "2":
        path, original = parts[-1].split("\t", 1)
        return f"{code} {original} -> {path}"
    return f"{code} {parts[-1]}"


def render(status: Status, commits: list[str], root: str) -> str:
    lines = [f"Repository: {root}"] if root else []
    lines.append(f"Branch: {_branch(status, commits)}")
    if status.changes:
        lines.append("Changes (as `git status --short`; paths relative to the repository root):")
        lines.extend(status.changes[:MAX_CHANGES])
        if len(status.changes) > MAX_CHANGES:
            lines.append(f"... and {len(status.changes) - MAX_CHANGES} more")
    else:
        lines.append("Working tree clean.")
    if commits:
        lines.append("Recent commits:")
        lines.extend(_cut_subject(commit) for commit in commits)
    return "\n".join(lines)


def _branch(status: Status, commits: list[str]) -> str:
    if status.oid == "(initial)":
        return f"{status.head} (no commits yet)"
    if status.head == "(detached)":
        # log's %h is git's own unique abbreviation of HEAD; the raw oid is only the fallback.
        sha = commits[0].split(" ", 1)[0] if commits else status.oid[:7]
        return f"detached at {sha}"
    if not status.upstream:
        return f"{status.head} (no upstream)"
    if status.ahead_behind is None:
        return f"{status.head} (upstream {status.upstream} is gone)"
    ahead, behind = status.ahead_behind
    if not ahead and not behind:
        return f"{status.head}, up to date with {status.upstream}"
    return f"{status.head}, ahead {ahead} and behind {behind} of {status.upstream}"


def _cut_subject(commit: str) -> str:
    sha, _, subject = commit.partition(" ")
    if len(subject) > SUBJECT_CHARS:
        subject = subject[: SUBJECT_CHARS - 3] + "..."
    return f"{sha} {subject}"


def _failure_reason(stderr: str, cwd: Path) -> str:
    if "not a git repository" in stderr:
        return f"not a git repository: {cwd}"
    first = next((line for line in stderr.splitlines() if line.strip()), "no message")
    return f"git status failed in {cwd}: {first.removeprefix('fatal: ')}"


@dataclass(frozen=True)
class _Result:
    returncode: int
    stdout: str
    stderr: str


def _run_together(git: str, cwd: Path, commands: list[list[str]]) -> list[_Result]:
    """Run independent git commands at once; all of them share one deadline."""
    env = {
        **child_environment(),
        "GIT_OPTIONAL_LOCKS": "0",  # status must never take the index lock a concurrent git of the user's needs
        "LC_ALL": "C",
        "GIT_PAGER": "cat",
        "PAGER": "cat",
        "GIT_TERMINAL_PROMPT": "0",
    }
    base = [git, "--no-pager", *_CONFIG]
    processes: list[subprocess.Popen[bytes]] = []
    lineages: list[Lineage] = []
    launches = []
    try:
        for command in commands:
            argv, command_env, preexec, fds = [*base, *command], env, None, ()
            launch = _confined(argv, env, cwd) if command is _STATUS else None
            if launch is not None:
                launches.append(launch)
                argv, command_env, preexec, fds = launch.argv, launch.env, launch.preexec_fn, launch.pass_fds
            lineage = Lineage()  # registered: a sweep for a sandboxed command's orphans must not take it for one
            lineages.append(lineage)
            processes.append(
                lineage.spawn(
                    argv,
                    preexec,
                    new_session=False,
                    cwd=cwd,
                    env=command_env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    pass_fds=fds,
                )
            )
        deadline = time.monotonic() + GIT_TIMEOUT
        results = []
        for process in processes:
            stdout, stderr = process.communicate(timeout=max(0.0, deadline - time.monotonic()))
            results.append(_Result(process.returncode, _decode(stdout), _decode(stderr)))
        return results
    except subprocess.TimeoutExpired:
        raise Skip(f"git took longer than {GIT_TIMEOUT:g} s in {cwd}") from None
    except OSError as exc:
        raise Skip(f"cannot run git in {cwd}: {exc.strerror or exc}") from None
    finally:
        for process in processes:
            if process.returncode is None:  # not reaped by communicate: stop it and close its pipes
                process.kill()
                process.communicate()
        for lineage in lineages:
            lineage.close()
        for launch in launches:
            launch.cleanup()


def _confined(argv: list[str], env: dict[str, str], cwd: Path):
    """`git status` in the read-only sandbox, where there is one: it reads the repository's own config and
    attributes, which a downloaded project chooses and which can name programs (filter drivers) beyond the ones
    `_CONFIG` switches off; `log --format` and `rev-parse` run none. None runs it as it is."""
    from mini_agent.safety.sandbox import Confinement, SandboxUnavailable, confine

    try:
        return confine(argv, env, cwd, Confinement("read-only", root=cwd))
    except SandboxUnavailable:
        return None


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
