"""One invocation's supervisor, forked from the server: forks the worker, passes on the client's signals, and
tells the client how the worker ended. It is a process of its own so that the server can stop or die while a
run goes on: only the client and this process know about the run."""

from __future__ import annotations

import os
import select
import signal
import socket
from typing import NoReturn

from mini_agent.warm import protocol

BLOCKED = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGWINCH}
BLOCKED |= {signal.SIGUSR1, signal.SIGUSR2}
PR_SET_PDEATHSIG = 1
TERMINAL_GROUP = {signal.SIGINT, signal.SIGQUIT, signal.SIGWINCH, signal.SIGHUP, signal.SIGCONT}
"""Signals a terminal sends to its whole foreground group: they go to the worker's group (its children too)."""


def supervise(connection: socket.socket, reader: protocol.Reader, request: dict, inherited: list) -> NoReturn:
    """Runs in the forked supervisor; never returns. `inherited`: the server's sockets and descriptors to let go
    of (the listening socket, the lock: a run must not keep a stopped server's lock or socket alive)."""
    for item in inherited:
        item.close() if isinstance(item, socket.socket) else os.close(item)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_BLOCK, BLOCKED)  # until the worker has its own handlers
    fds = reader.fds
    supervisor = os.getpid()
    try:
        worker = os.fork()
    except OSError:
        protocol.send(connection, {"no": "fork failed"})
        os._exit(0)
    if worker == 0:
        connection.close()
        _die_with(supervisor)
        _work(request, fds)
    reader.close_fds()
    try:
        protocol.send(connection, {"ok": worker})
    except OSError:
        pass
    _relay(connection, reader, worker)


def _die_with(supervisor: int) -> None:
    """The worker is killed when its supervisor dies: the client has then been told the run ended, and a worker
    left running would go on writing files and printing to a terminal nobody is watching for it. (Its commands'
    processes go with it: the bash watchdog kills them when the agent dies.)"""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != supervisor:  # died before the request took effect
        os._exit(1)


def _work(request: dict, fds: list[int]) -> NoReturn:
    from mini_agent.serve import worker

    try:
        worker.become(request, fds)
        from mini_agent.cli.main import main
    except BaseException as exc:  # noqa: BLE001 - nothing may unwind into the server's loop
        try:
            os.write(2, f"mini-agent: the warm worker could not start: {exc}\n".encode())
        finally:
            os._exit(70)
    worker.run(main)


def _relay(connection: socket.socket, reader: protocol.Reader, worker: int) -> NoReturn:
    watched = [os.pidfd_open(worker)]
    client = connection
    connection.settimeout(None)
    while True:
        ready, _, _ = select.select([*watched, client] if client else watched, [], [])
        if client in ready:
            try:
                chunk = connection.recv(4096)
            except OSError:
                chunk = b""
            if not chunk:  # the client is gone (closed terminal, killed): hang up as its terminal would
                _deliver(worker, signal.SIGHUP)
                _deliver(worker, signal.SIGCONT)
                client = None
                continue
            reader.buffer += chunk
            while (message := _next(reader)) is not None:
                _deliver(worker, int(message.get("signal", 0)))
        if watched[0] in ready:
            _pid, status = os.waitpid(worker, 0)
            if os.WIFSIGNALED(status):
                ended = {"signal": os.WTERMSIG(status)}
            else:
                ended = {"exit": os.waitstatus_to_exitcode(status)}
            try:
                protocol.send(connection, ended)
            except OSError:
                pass
            os._exit(0)


def _next(reader: protocol.Reader) -> dict | None:
    try:
        return reader.take()
    except (ValueError, EOFError, TypeError):
        reader.buffer = b""
        return None


def _deliver(worker: int, number: int) -> None:
    if number <= 0 or number >= signal.NSIG:
        return
    # The worker's group lost its terminal's job control (it is its own session): SIGTSTP with the default
    # action would be discarded there, so a stop is a SIGSTOP.
    if number == signal.SIGTSTP:
        number = signal.SIGSTOP
    try:
        if number in TERMINAL_GROUP or number == signal.SIGSTOP:
            os.killpg(worker, number)
        else:
            os.kill(worker, number)
    except ProcessLookupError:
        try:
            os.kill(worker, number)  # before the worker's setsid its group is the server's: only the worker
        except ProcessLookupError:
            pass
    except PermissionError:
        pass
