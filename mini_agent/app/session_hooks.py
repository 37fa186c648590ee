"""SessionStart and SessionEnd at a session's life points (app/lifecycle.py calls them), and SessionEnd on SIGTERM
and SIGHUP while the process still can run it.

A session starts when the agent gets its conversation ("startup", "resume" for --continue / --resume) and again
at /clear ("clear") and /resume ("resume"); what its SessionStart hooks print reaches the model at the start of
the next turn. It ends at /clear and /resume (for the conversation left), and when the process leaves: the REPL
on Ctrl-D or /exit ("prompt_input_exit"), a one-shot run at its end, a crash or a signal ("other").
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mini_agent.agent import Agent
    from mini_agent.hooks import Hooks

ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class SessionHooks:
    """The hooks of the agent whose session is open, until it ends (each end runs its hooks once)."""

    def __init__(self) -> None:
        self._hooks: Hooks | None = None
        self._lock = threading.Lock()

    def started(self, agent: Agent, source: str) -> None:
        with self._lock:
            self._hooks = agent.hooks
        context = agent.hooks.session_started(source)
        if context:
            agent.tell_next_turn(context)

    def ended(self, reason: str, quiet: bool = False) -> None:
        with self._lock:
            hooks, self._hooks = self._hooks, None
        if hooks is not None and hooks.has("SessionEnd"):
            hooks.session_ended(reason, quiet=quiet)


@contextmanager
def ending_on_signals(sessions, hooks: Hooks | None) -> Iterator[None]:
    """While a front end runs: SIGTERM and SIGHUP run the SessionEnd hooks (quietly, within their budget), then
    do what they did before (by default, end the process by that signal). Only where there are SessionEnd hooks,
    on the main thread, and not for a signal that was ignored (`nohup`)."""
    if hooks is None or not hooks.has("SessionEnd") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, object] = {}

    def handler(signum: int, _frame) -> None:
        sessions.end("other", quiet=True)
        signal.signal(signum, previous[signum])  # type: ignore[arg-type]
        os.kill(os.getpid(), signum)

    for signum in ENDING_SIGNALS:
        before = signal.getsignal(signum)
        if before is not signal.SIG_IGN:
            previous[signum] = before if before is not None else signal.SIG_DFL
            signal.signal(signum, handler)
    try:
        yield
    finally:
        for signum, before in previous.items():
            signal.signal(signum, before)  # type: ignore[arg-type]
