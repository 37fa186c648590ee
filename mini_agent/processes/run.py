"""Running a shell command as its own process group, with bounded output capture and a whole-group kill.

The bash tool needs four guarantees a plain `subprocess.run` does not give: memory stays bounded whatever the
command prints, a background process holding the pipe open never blocks us, a timeout or Ctrl-C kills
every process the command started, not just the shell, and nothing it started outlives the agent. A
contained command (confined without a PID namespace) loses everything it started when it returns, background jobs
included; the killing is processes/tree.py's.
"""

from __future__ import annotations

import codecs
import os
import selectors
import subprocess
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mini_agent import threads
from mini_agent.processes.tree import Lineage
from mini_agent.processes.watchdog import watchdog

if TYPE_CHECKING:
    from mini_agent.safety.sandbox import Launch

READ_SIZE = 1 << 20
PIPE_SIZE = 1 << 20
POLL_INTERVAL = 0.1
"""How often we look whether the shell has exited while its pipe stays silent (a background process holds it)."""
DRAIN_AFTER_EXIT = 0.2
"""How long to keep reading once the shell has exited: its last output, not a background process's chatter."""
AGENT_CREDENTIALS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
"""The agent's own credentials stay with the agent: a command it runs could send them anywhere."""


def child_environment() -> dict[str, str]:
    """Our environment for a command we start, without the agent's own credentials."""
    return {name: value for name, value in os.environ.items() if name not in AGENT_CREDENTIALS}


class BoundedOutput:
    """UTF-8 text kept as a head and a tail of bounded size, with a count of the characters cut in between."""

    def __init__(self, head_limit: int, tail_limit: int) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head_limit = head_limit
        self._tail_limit = tail_limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.omitted = 0

    def feed(self, data: bytes, final: bool = False) -> None:
        """Add raw bytes; a multi-byte character split across two reads is decoded once both halves arrived."""
        text = self._decoder.decode(data, final)
        room = self._head_limit - self._head_len
        if room > 0 and text:
            self._head.append(text[:room])
            self._head_len += len(self._head[-1])
            text = text[room:]
        if text:
            self._tail.append(text)
            self._tail_len += len(text)
            self._trim_tail()

    def _trim_tail(self) -> None:
        while self._tail_len - len(self._tail[0]) >= self._tail_limit:
            self._tail_len -= len(self._tail[0])
            self.omitted += len(self._tail.popleft())
        excess = self._tail_len - self._tail_limit
        if excess > 0:
            self._tail[0] = self._tail[0][excess:]
            self._tail_len -= excess
            self.omitted += excess

    @property
    def head(self) -> str:
        return "".join(self._head)

    @property
    def tail(self) -> str:
        return "".join(self._tail)

    @property
    def total(self) -> int:
        """Characters seen so far, kept or cut."""
        return self._head_len + self.omitted + self._tail_len


@dataclass(frozen=True)
class Finished:
    """How a command ended: its exit status (negative: killed by that signal) and whether we killed it."""

    returncode: int
    timed_out: bool


def run_launched(launch: Launch, cwd: Path, timeout: float, output: BoundedOutput) -> Finished:
    """`run_captured` for a confined command: everything its Launch says the child needs (the Landlock set-up,
    the seccomp program's descriptor, whether its leftovers must be swept) is passed, so no caller can forget one."""
    return run_captured(
        launch.argv,
        cwd,
        launch.env,
        timeout,
        output,
        launch.preexec_fn,
        contained=launch.contained,
        pass_fds=launch.pass_fds,
    )


def run_captured(
    argv: list[str],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    output: BoundedOutput,
    preexec_fn: Callable[[], None] | None = None,
    contained: bool = False,
    pass_fds: tuple[int, ...] = (),
) -> Finished:
    """Run `argv` in a new session, feeding its stdout and stderr (one pipe, in arrival order) into `output`.

    `preexec_fn` runs in the child between fork and exec (the sandbox applies Landlock there); `pass_fds` are
    inherited by it (the sandbox's seccomp program for bubblewrap).

    Returns when the process itself has exited, even if a background child still holds the pipe; on timeout or
    any exception (KeyboardInterrupt included) the whole process group is killed first. `contained`: whatever
    the command started is killed when it returns, wherever it went (see processes/tree.py). Whatever is left of the
    group when the agent dies is killed then (see _watchdog).
    """
    guard = watchdog()
    lineage = Lineage(contained)
    try:
        process = lineage.spawn(
            argv,
            preexec_fn,
            cwd=cwd,
            env={**env, **guard.environment()},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            pass_fds=pass_fds,
        )
    except BaseException:
        lineage.close()
        raise
    guard.watch(process.pid)  # at once: from here on, the group dies with the agent
    assert process.stdout is not None
    _enlarge_pipe(process.stdout.fileno())
    at_eof = False
    try:
        at_eof, timed_out = _pump(process, output, time.monotonic() + timeout)
        if timed_out:
            lineage.kill()
            at_eof = _drain(process.stdout.fileno(), output, DRAIN_AFTER_EXIT)
        returncode = process.wait()
        if contained:
            lineage.kill(grace=0)
            at_eof = at_eof or _drain(process.stdout.fileno(), output, DRAIN_AFTER_EXIT)
    except BaseException:
        lineage.kill()
        raise
    finally:
        output.feed(b"", final=True)
        _release(process, at_eof)
        lineage.close()
    return Finished(returncode, timed_out)


def _pump(process: subprocess.Popen, output: BoundedOutput, deadline: float) -> tuple[bool, bool]:
    """Read until EOF, the shell's exit, or the deadline; returns (at_eof, timed_out)."""
    fd = process.stdout.fileno()  # type: ignore[union-attr]
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False, True
            if selector.select(min(remaining, POLL_INTERVAL)):
                data = os.read(fd, READ_SIZE)
                if not data:
                    return True, False
                output.feed(data)
            if process.poll() is not None:
                return _drain(fd, output, DRAIN_AFTER_EXIT), False


def _drain(fd: int, output: BoundedOutput, seconds: float) -> bool:
    """Read what arrives within `seconds`; True if the pipe reached EOF (no process holds it any more)."""
    deadline = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while (remaining := deadline - time.monotonic()) > 0:
            if not selector.select(remaining):
                return False
            data = os.read(fd, READ_SIZE)
            if not data:
                return True
            output.feed(data)
    return False


def _enlarge_pipe(fd: int) -> None:
    """Fewer, larger reads when a command floods its output (Linux only; best effort)."""
    try:
        import fcntl

        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    except (ImportError, AttributeError, OSError):
        pass


def _release(process: subprocess.Popen, at_eof: bool) -> None:
    """Close our end of the pipe, unless a background process still writes to it.

    Closing it under a live daemon would kill that daemon with SIGPIPE at its next write; instead a daemon
    thread reads and discards its output until the last writer exits.
    """
    stdout = process.stdout
    if stdout is None:
        return
    if at_eof or process.returncode is None:
        stdout.close()
        return
    threads.start(_discard_until_eof, stdout, name="bash-background-drain")


def _discard_until_eof(stream) -> None:
    try:
        while os.read(stream.fileno(), READ_SIZE):
            pass
    except OSError:
        pass
    finally:
        stream.close()
