"""From a command and a confinement to what `subprocess.Popen` needs: argv, environment, preexec function and the
descriptors to pass, plus the private temp dir that lives as long as the command.

Every confined command passes here: its environment loses the variables that point at the user's services
(services.py), and on Linux it runs under the seccomp program (seccomp.py) where libseccomp is present."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mini_agent.safety.sandbox import scratch, seccomp, services
from mini_agent.safety.sandbox.confinement import Confinement, plan
from mini_agent.safety.sandbox.gitguard import GitChanges, GitGuard
from mini_agent.safety.sandbox.probe import mechanism, unavailable_reason
from mini_agent.safety.sandbox.watch import Fingerprint, changed, fingerprint, watched_paths


class SandboxUnavailable(RuntimeError):
    """No sandbox mechanism works on this machine (or it failed to set up); the caller keeps asking instead."""


@dataclass
class Launch:
    """How to start one confined command. Call `cleanup()` once it has exited."""

    argv: list[str]
    env: dict[str, str]
    preexec_fn: Callable[[], None] | None
    mechanism: str = ""
    contained: bool = True
    """Whether the caller must kill what the command leaves behind (processes/tree.py's Lineage): every mechanism but
    bubblewrap, whose PID namespace dies with the command."""
    pass_fds: tuple[int, ...] = ()
    """Descriptors the child must inherit (bubblewrap's seccomp program): give them to Popen's `pass_fds`."""
    tmpdir: Path | None = None
    _private: scratch.Private | None = None
    _closers: list[Callable[[], None]] = field(default_factory=list)
    _watched: dict[Path, Fingerprint] = field(default_factory=dict)
    _git: GitGuard | None = None

    def protected_changes(self) -> tuple[Path, ...]:
        """Protected paths (the agent's config) that changed since `confine()`: what the mechanism could not block
        (Landlock, or a path that did not exist yet). Call it after the run."""
        return changed(self._watched)

    def git_changes(self) -> GitChanges:
        """What the command did to the root's git dir beyond ordinary work; control files it changed are put back
        here. Call it once, after the run."""
        guard, self._git = self._git, None
        return guard.check() if guard is not None else GitChanges()

    def cleanup(self) -> None:
        """Give back the private temp dir (emptied, or removed) and release the Landlock ruleset; safe to call
        twice."""
        while self._closers:
            self._closers.pop()()
        if self._private is not None:
            scratch.give_back(self._private)
            self._private = None


def confine(
    argv: list[str], env: dict[str, str], cwd: Path, confinement: Confinement, writable: tuple[Path, ...] = ()
) -> Launch:
    """argv/env/preexec to run `argv` confined. `writable` = extra files/dirs that must stay writable
    (e.g. the bash tool's pwd-report file). Raises SandboxUnavailable."""
    found = mechanism()
    if found is None:
        raise SandboxUnavailable(f"no sandbox on this machine: {unavailable_reason()}")
    private = scratch.take()
    tmpdir = private.tmpdir
    confined_env = {**services.environment(env), "TMPDIR": str(tmpdir)}
    launch = Launch(argv=[], env=confined_env, preexec_fn=None, mechanism=found.name)
    launch.tmpdir, launch._private = tmpdir, private
    launch._watched = fingerprint(watched_paths(confinement))
    try:
        resolved = plan(confinement, tmpdir, writable)
        if confinement.level == "workspace-write":  # the read-only level cannot write any git dir
            launch._git = GitGuard.take(resolved.root, resolved.writable)
            if launch._git.new_keep:  # made just now: planned again, so that it is read-only from this command on
                resolved = plan(confinement, tmpdir, writable)
        code = seccomp.program() if found.name in ("bubblewrap", "landlock") else None
        if found.name == "bubblewrap":
            from mini_agent.safety.sandbox import bubblewrap

            hide_with = private.placeholders()
            covered = services.covered(env, confinement.home or Path.home(), resolved)
            program = seccomp.memfd(code) if code is not None else None
            if program is not None:
                launch._closers.append(lambda: os.close(program))
                launch.pass_fds = (program,)
            launch.argv = bubblewrap.command(
                found.executable or "bwrap", resolved, cwd, argv, hide_with, covered, seccomp_fd=program
            )
            launch.contained = False
        elif found.name == "landlock":
            from mini_agent.safety.sandbox import landlock

            ruleset = landlock.Ruleset(resolved, found.abi)
            launch._closers.append(ruleset.close)
            restrict = ruleset.restrict if code is None else _then(ruleset.restrict, seccomp.Loader(code).load)
            launch.argv, launch.preexec_fn = landlock.wrap(argv), restrict
        else:
            from mini_agent.safety.sandbox import seatbelt

            launch.argv = seatbelt.command(found.executable or "sandbox-exec", resolved, argv)
    except OSError as exc:
        launch.cleanup()
        raise SandboxUnavailable(f"{found.name} could not be set up: {exc}") from exc
    except BaseException:
        launch.cleanup()
        raise
    return launch


def _then(first: Callable[[], None], second: Callable[[], None]) -> Callable[[], None]:
    def both() -> None:
        first()
        second()

    return both
