"""Where `mini-agent acp` does its work: the agent's turns on the main thread, the protocol on another, and
stdout kept for protocol messages alone.

Turns run on the main thread because that is where Ctrl-C lands: `session/cancel` interrupts a turn exactly as
Ctrl-C does in the REPL (a signal to the main thread whose handler raises KeyboardInterrupt: the running
command's process group killed, the partial reply kept, every call settled), so there is one interruption path,
not two. The protocol's asyncio loop runs on
a thread of its own and hands work over with `submit`.

The protocol's streams are private duplicates of stdin and stdout, made before anything else runs; file
descriptor 1 then points at stderr and 0 at /dev/null. A stray print, a library's warning or a child that
inherits stdout writes to stderr, and no command can read the editor's messages from stdin.
"""

from __future__ import annotations

import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mini_agent import threads


@dataclass(frozen=True)
class ProtocolStreams:
    """The editor's ends: descriptors only the protocol reads and writes."""

    incoming: int
    outgoing: int


def take_stdio() -> ProtocolStreams:
    """Keep stdin and stdout for the protocol; from here on fd 1 is stderr and fd 0 is /dev/null."""
    sys.stdout.flush()
    incoming, outgoing = os.dup(0), os.dup(1)  # not inheritable: no child gets the editor's pipes
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return ProtocolStreams(incoming, outgoing)


CANCEL = signal.SIGUSR2
"""The signal a cancel sends the main thread. Not SIGINT, so a human's Ctrl-C keeps its own meaning (a turn
interrupted, or the server ended when idle) and a cancel's signal can never be taken for one."""
RESEND = 0.1
"""Seconds between repeats of a cancel's signal until it lands: one that arrives just before the main thread
blocks in a wait is taken before the wait begins and would not end it."""


class MainThreadRunner:
    """Runs submitted jobs one at a time on the thread that calls `serve` (the main thread)."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[], Any], Future] | None] = queue.Queue()
        self._interruptible: object | None = None
        """The token of the turn a cancel may interrupt now; None between turns."""
        self._interrupt: object | None = None
        """The token a cancel asked to interrupt, until its KeyboardInterrupt is raised or its turn ends."""
        self._main = threading.main_thread().ident

    def submit(self, job: Callable[[], Any]) -> Future:
        future: Future = Future()
        self._jobs.put((job, future))
        return future

    def stop(self) -> None:
        self._jobs.put(None)

    def serve(self) -> None:
        """Run jobs until `stop`."""
        previous = signal.signal(CANCEL, self._on_cancel)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {CANCEL})  # a mask inherited from the editor must not hold it
        try:
            while (item := self._jobs.get()) is not None:
                job, future = item
                if future.set_running_or_notify_cancel():
                    self._run(job, future)
        finally:
            signal.signal(CANCEL, previous)

    @staticmethod
    def _run(job: Callable[[], Any], future: Future) -> None:
        try:
            value = job()
        except BaseException as exc:  # a human's Ctrl-C included: the caller hears of it, the loop goes on
            future.set_exception(exc)
        else:
            future.set_result(value)

    @contextmanager
    def interruptible(self, token: object) -> Iterator[None]:
        """While inside, `interrupt(token)` raises KeyboardInterrupt here, as Ctrl-C would."""
        self._interrupt, self._interruptible = None, token
        try:
            yield
        finally:
            self._interruptible = self._interrupt = None

    def interrupt(self, token: object) -> bool:
        """Interrupt the turn `token` names if it is running (from any thread); whether it was."""
        if self._interruptible is None or self._interruptible != token:
            return False
        self._interrupt = token
        threads.start(self._signal, token, name="acp-cancel")
        return True

    def _signal(self, token: object) -> None:
        """The signal wakes a blocking wait, as a terminal's Ctrl-C does; repeated until it has landed."""
        landed = threading.Event()
        while self._interrupt == token and self._interruptible == token:
            signal.pthread_kill(self._main, CANCEL)
            landed.wait(RESEND)

    def _on_cancel(self, signum: int, frame: object) -> None:
        asked = self._interrupt
        if asked is not None and asked == self._interruptible:
            self._interrupt = None  # once: a repeat arriving after this is ignored
            raise KeyboardInterrupt
