"""The agent's background threads, which leave the process's signals to the main thread.

A signal sent to the process (the terminal's Ctrl-C, a `kill`) is taken by whichever of its threads the kernel
finds ready first. Python runs the handler in the main thread, but only once that thread runs Python code again:
a main thread blocked in a read (the approval question's key) or a wait never learns of a Ctrl-C that a busy
thread took, and the run hangs where the human pressed it. A thread that starts processes is the usual taker:
each spawn sets the thread's signal mask twice, and the kernel hands a pending signal to the thread that does.

So every thread of ours blocks those signals as its first act (`start`/`new`, and `leave_to_main` for a
pool's workers), and only the main thread can take them. A child inherits the mask of the thread that starts it, so
the few places that start a long-lived process from a background thread (a command, a background job, a hook)
give it those signals back (`child_preexec`). The one thread that takes them (`takes_signals`) is the MCP
event loop's: it is idle but while it starts a server, and the servers it starts (through the SDK, which we
cannot hand a `preexec_fn`) must take SIGTERM.

A leaf: imports nothing of mini-agent's.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

MAIN_ONLY = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})
"""Signals whose handler must interrupt what the main thread is blocked in: Ctrl-C, and the ends a session's
hooks run on. (A cancel from an editor is sent to the main thread itself, app/acp_runner.py.)"""


def start(target: Callable[..., object], *args: object, name: str, takes_signals: bool = False) -> threading.Thread:
    """A daemon thread running `target(*args)`, started, that never takes MAIN_ONLY's signals; with
    `takes_signals`, one that can, as the main thread can, wherever it was started from (the MCP event loop,
    whose children the SDK starts: see the module)."""
    thread = new(target, *args, name=name, takes_signals=takes_signals)
    thread.start()
    return thread


def new(target: Callable[..., object], *args: object, name: str, takes_signals: bool = False) -> threading.Thread:
    """The same thread, for the caller to start."""
    how = signal.SIG_UNBLOCK if takes_signals else signal.SIG_BLOCK

    def run() -> None:
        signal.pthread_sigmask(how, MAIN_ONLY)  # a new thread is never the main thread
        target(*args)

    return threading.Thread(target=run, name=name, daemon=True)


def leave_to_main() -> None:
    """Block MAIN_ONLY's signals in the calling thread, unless it is the main thread (a pool's `initializer`).

    Blocking takes nothing: a signal already pending stays with the process for the main thread."""
    if threading.current_thread() is not threading.main_thread():
        signal.pthread_sigmask(signal.SIG_BLOCK, MAIN_ONLY)


def child_preexec() -> Callable[[], None] | None:
    """For a process started here that must take signals as any program does: None where MAIN_ONLY's signals
    are not blocked (the main thread: `subprocess` keeps its fast path), else a `preexec_fn` that unblocks them
    in the child, which would otherwise inherit this thread's mask (and keep it across `exec`)."""
    if not MAIN_ONLY & signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        return None
    return _unblock_in_child


def _unblock_in_child() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, MAIN_ONLY)
