"""The client side of the warm start: hand this invocation to the server, forward signals, end as the worker did.

It imports only the standard library's cheapest modules: the C modules under `signal` and `socket`, whose own
imports (`enum`, `selectors`, `collections`) would cost ~9 ms of every warm invocation (see protocol.py).
Anything unexpected (no server, a stale socket, a server of another user or another version, a slow handshake)
returns a `Fallback`, and the caller runs the invocation itself: the result never differs, only the time it takes.
"""

from __future__ import annotations

import _signal as signal  # the C module: its names and functions, with plain ints for signals
import _socket
import os
import sys

from mini_agent import __version__
from mini_agent.warm import protocol
from mini_agent.warm.paths import installation_key, runtime_dir, socket_path

CONNECT_TIMEOUT = 0.5
HANDSHAKE_TIMEOUT = 3.0
"""Seconds the server has to check the request and fork the worker (milliseconds when well)."""
GROUP_SIGNALS = (signal.SIGINT, signal.SIGQUIT, signal.SIGWINCH, signal.SIGHUP, signal.SIGCONT)
"""What a terminal sends to the whole foreground process group; the supervisor sends them to the worker's group."""
FORWARDED = (*GROUP_SIGNALS, signal.SIGTERM, signal.SIGTSTP, signal.SIGUSR1, signal.SIGUSR2)
PYTHON_SETTINGS = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "PYTHONUSERBASE")
"""Settings that decide which modules a process imports: the server must have started with the same."""


class Fallback:
    """Run the invocation here. `start`: no usable server answered, so start one for the next invocation.

    (A plain class: importing dataclasses would cost the client more than the rest of its work.)"""

    __slots__ = ("reason", "start")

    def __init__(self, reason: str, start: bool) -> None:
        self.reason, self.start = reason, start


def hand_over(argv: list[str]) -> int | Fallback:
    """The invocation's exit status as the warm worker ran it, or why it was not handed over."""
    if protocol.confined(os.getpid()):  # a sandboxed command's own mini-agent stays in its sandbox
        return Fallback("running confined", start=False)
    directory = runtime_dir()
    if directory is None:
        return Fallback("no private runtime directory", start=False)
    pending: list[int] = []
    previous = {number: signal.signal(number, lambda signum, _frame: pending.append(signum)) for number in FORWARDED}
    connection = None
    try:
        connection = _connect(socket_path(directory))
        if isinstance(connection, Fallback):
            return connection
        reply = _request(connection, argv)
        if isinstance(reply, Fallback):
            return reply
        return _wait(connection, pending)
    finally:
        if connection is not None and not isinstance(connection, Fallback):
            connection.close()
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in pending:  # arrived before any worker could take it: this process's own to handle
            os.kill(os.getpid(), number)


def _connect(path: str) -> _socket.socket | Fallback:
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return Fallback("no server", start=True)
    problem = protocol.untrusted(sock)
    if problem:  # a socket in our private directory answered by someone else: never hand it anything
        sock.close()
        return Fallback(problem, start=False)
    return sock


def _request(sock: _socket.socket, argv: list[str]) -> dict | Fallback:
    umask = os.umask(0)
    os.umask(umask)
    try:
        cwd = os.getcwd()
    except OSError:
        return Fallback("no working directory", start=False)
    message = {
        "op": "run",
        "key": installation_key(),
        "version": __version__,
        "python": {name: os.environ.get(name, "") for name in PYTHON_SETTINGS},
        "argv": list(argv),
        "env": dict(os.environ),
        "cwd": cwd,
        "umask": umask,
    }
    sock.settimeout(HANDSHAKE_TIMEOUT)
    try:
        protocol.send(sock, message, [0, 1, 2])
        reply = protocol.Reader(sock).read()
    except (OSError, ValueError, EOFError):
        return Fallback("no answer", start=True)
    if reply is None:
        return Fallback("server closed the connection", start=True)
    if "stale" in reply:
        return Fallback("server is outdated", start=True)
    if "ok" not in reply:
        return Fallback(str(reply.get("no", "declined")), start=False)
    return reply


def _wait(sock: _socket.socket, pending: list[int]) -> int:
    def forward(signum: int, _frame) -> None:
        try:
            protocol.send(sock, {"signal": signum})
        except OSError:
            return
        if signum == signal.SIGTSTP:  # stop as a job does; the shell's `fg` sends SIGCONT, which is forwarded
            os.kill(os.getpid(), signal.SIGSTOP)

    for number in FORWARDED:
        signal.signal(number, forward)
    while pending:
        forward(pending.pop(0), None)
    sock.settimeout(None)
    try:
        ended = protocol.Reader(sock).read()
    except (OSError, ValueError, EOFError):
        ended = None
    if ended is None:
        print("mini-agent: lost contact with the warm worker.", file=sys.stderr)
        return 1
    if "signal" in ended:
        number = int(ended["signal"])
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
        return 128 + number
    return int(ended.get("exit", 1))
