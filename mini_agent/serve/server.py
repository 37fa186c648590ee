"""The warm server: preloads everything, listens on the user's private socket, and for each invocation checks
who is asking (SO_PEERCRED) and whether its own code is still the installed code, then forks a supervisor.

It holds no environment of the user's and never runs user code itself: every invocation runs in a fresh
fork, so nothing of one is visible to the next. It exits after an idle period (MINI_AGENT_SERVER_IDLE
seconds, default 600), on `mini-agent server stop` or SIGTERM, and as soon as the installed package changed.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import socket
import sys
import time

from mini_agent import __version__
from mini_agent.warm import protocol
from mini_agent.warm.paths import installation_key, lock_path, runtime_dir, socket_path
from mini_agent.warm.stamp import package_stamp

IDLE_DEFAULT = 600.0
LOCK_WAIT = 2.0
"""Seconds to wait for a server that is on its way out (it found itself outdated) to let go of the lock."""
REQUEST_TIMEOUT = 2.0


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    os.chdir("/")
    after = int(argv[argv.index("--after") + 1]) if "--after" in argv else None
    directory = runtime_dir()
    if directory is None:
        return
    lock = _lock(lock_path(directory))
    if lock is None:
        return  # another server of this installation runs or starts
    if after is not None:
        from mini_agent.serve.quiet import wait_for_quiet

        wait_for_quiet(after)  # not beside the run that started it: they would share the CPU
    from mini_agent.serve.preload import preload

    preload()
    import gc

    gc.collect()
    gc.freeze()  # the preloaded objects stay in shared pages: no collection in a worker touches them
    from mini_agent import gc_pause

    gc_pause.resume()  # paused by the command's start (entry.py), like any start-up
    Server(directory, lock).serve()


def _lock(path: str) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            if time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(0.05)


class Server:
    def __init__(self, directory: str, lock: int) -> None:
        self.path = socket_path(directory)
        self.lock = lock
        self.stamp = package_stamp()
        self.key = installation_key()
        self.python = {name: os.environ.get(name, "") for name in _python_settings()}
        self.started = time.time()
        self.idle = float(os.environ.get("MINI_AGENT_SERVER_IDLE") or IDLE_DEFAULT)
        self.served = 0

    def serve(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.unlink(self.path)  # we hold the lock: a socket file left here belongs to a server that died
        except FileNotFoundError:
            pass
        old_umask = os.umask(0o177)
        try:
            listener.bind(self.path)
        finally:
            os.umask(old_umask)
        listener.listen(64)
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
        last = time.monotonic()
        try:
            while True:
                _reap()
                remaining = self.idle - (time.monotonic() - last)
                if remaining <= 0:
                    return
                ready, _, _ = select.select([listener], [], [], min(remaining, 30.0))
                if not ready:
                    continue
                connection, _ = listener.accept()
                last = time.monotonic()
                if self.handle(connection, listener):
                    return
        finally:
            self._leave(listener)

    def _leave(self, listener: socket.socket) -> None:
        try:
            os.unlink(self.path)  # ours: no other server of this installation binds while we hold the lock
        except OSError:
            pass
        listener.close()
        os.close(self.lock)

    def handle(self, connection: socket.socket, listener: socket.socket) -> bool:
        """Serve one connection; whether the server should exit."""
        reader = protocol.Reader(connection)
        try:
            if protocol.untrusted(connection):
                return False  # another user's process, or a sandboxed one: not a word, not a descriptor
            connection.settimeout(REQUEST_TIMEOUT)
            request = reader.read(with_fds=True)
            if request is None:
                return False
            return self._answer(connection, reader, request, listener)
        except (OSError, ValueError, EOFError, TypeError):
            return False
        finally:
            reader.close_fds()
            connection.close()

    def _answer(self, connection, reader: protocol.Reader, request: dict, listener: socket.socket) -> bool:
        op = request.get("op")
        if op == "status":
            protocol.send(connection, self.status())
            return False
        if op == "stop":
            protocol.send(connection, {"stopping": os.getpid()})
            return True
        if request.get("key") != self.key or request.get("version") != __version__:
            protocol.send(connection, {"no": "another installation or version"})
            return request.get("key") == self.key  # our own installation at another version: we are outdated
        if package_stamp() != self.stamp:
            protocol.send(connection, {"stale": True})
            return True
        if request.get("python") != self.python:
            protocol.send(connection, {"no": "the client's Python settings differ from the server's"})
            return False
        different = protocol.elsewhere(protocol.peer(connection)[0])
        if different:
            protocol.send(connection, {"no": different})
            return False
        if len(reader.fds) != 3 or not os.path.isdir(str(request.get("cwd", ""))):
            protocol.send(connection, {"no": "incomplete request"})
            return False
        try:
            pid = os.fork()
        except OSError:
            protocol.send(connection, {"no": "fork failed"})
            return False
        if pid == 0:
            from mini_agent.serve.supervisor import supervise

            supervise(connection, reader, request, [listener, self.lock])
        self.served += 1
        return False

    def status(self) -> dict:
        return {
            "pid": os.getpid(),
            "version": __version__,
            "started": self.started,
            "rss_kib": _rss_kib(),
            "socket": self.path,
            "served": self.served,
            "idle_exit": self.idle,
        }


def _python_settings() -> tuple[str, ...]:
    from mini_agent.warm.client import PYTHON_SETTINGS

    return PYTHON_SETTINGS


def _reap() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _rss_kib() -> int:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0
