"""`mini-agent server status|start|stop`: ask the running server about itself, start one, stop it."""

from __future__ import annotations

import os
import socket
import time

from mini_agent.warm import protocol
from mini_agent.warm.paths import runtime_dir, socket_path
from mini_agent.warm.spawn import start_server

START_TIMEOUT = 60.0


def ask(op: str, timeout: float = 3.0) -> dict | None:
    """The server's answer to `op`, or None when no server of this installation answers."""
    directory = runtime_dir()
    if directory is None:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(socket_path(directory))
        if protocol.untrusted(sock):
            return None
        protocol.send(sock, {"op": op})
        return protocol.Reader(sock).read()
    except (OSError, ValueError, EOFError):
        return None
    finally:
        sock.close()


def status_lines() -> list[str]:
    directory = runtime_dir()
    where = socket_path(directory) if directory else "none (no private runtime directory)"
    state = ask("status")
    if state is None:
        return ["warm server: not running", f"socket: {where}"]
    uptime = time.time() - float(state["started"])
    return [
        f"warm server: running (mini-agent {state['version']})",
        f"pid: {state['pid']}",
        f"uptime: {_duration(uptime)}",
        f"memory (RSS): {int(state['rss_kib']) / 1024:.1f} MB",
        f"invocations served: {state['served']}",
        f"exits after: {_duration(float(state['idle_exit']))} idle",
        f"socket: {state['socket']}",
    ]


def stop() -> int | None:
    """Stop the server; its pid, or None when none was running. Runs in progress are not affected."""
    answer = ask("stop")
    if answer is None:
        return None
    pid = int(answer["stopping"])
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.02)
    return pid


def start() -> dict | None:
    """Start a server now (unless one runs) and wait until it answers; its status, or None if it did not come up."""
    state = ask("status")
    if state is not None:
        return state
    pid = start_server()
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        state = ask("status", timeout=1.0)
        if state is not None:
            return state
        if pid is not None and os.waitpid(pid, os.WNOHANG)[0] == pid:
            pid = None  # it exited: another server holds the lock and is still loading, so keep asking
        time.sleep(0.05)
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"
