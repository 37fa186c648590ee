"""The warm server's isolation, with real processes: no outsider (another user, a sandboxed process of ours) gets
anything from the client or the server, and a runtime directory others may enter is not used. Split from
test_warm.py so that the two run on two workers; nothing here asks a real server for a run, so test_warm.py's
outdated-source test, which makes every server asked for one leave, cannot disturb it."""

from __future__ import annotations

import ctypes
import os
import socket
import subprocess
from pathlib import Path

import pytest
from support import PATIENCE, alive, eventually
from support.fake_api import answer
from support.unprivileged import NOBODY
from support.warm import (
    PR_SET_NO_NEW_PRIVS,
    command,
    environment,
    installed,
    start,
    status,
)

from mini_agent.warm import protocol


def test_a_runtime_directory_others_may_enter_means_no_warm_start(api, tmp_path, runtime):
    env = environment(api, tmp_path, runtime, warm=True)
    (runtime / "mini-agent").mkdir(mode=0o755)
    (runtime / "mini-agent").chmod(0o755)
    api.script(answer("Cold."))
    assert command(["-p", "hi"], env, cwd=tmp_path, stdin=subprocess.DEVNULL).stdout == b"Cold.\n"
    assert "no private runtime directory" in status(env)["socket"]


OUTSIDERS = ["another user", "a sandboxed process of ours"]
"""Who must get nothing from either end: a process of another uid, and one of ours running with no_new_privs,
as every command in the agent's sandbox does (Landlock cannot hide /tmp/mini-agent-<uid> from it)."""


def _as_outsider(who: str, action) -> int:
    if who == "another user" and os.geteuid() != 0:
        pytest.skip("needs root to run a process as another user")
    pid = os.fork()
    if pid == 0:
        try:
            if who == "another user":
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            else:
                ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            action()
        finally:
            os._exit(0)
    return pid


@pytest.mark.parametrize("who", OUTSIDERS)
def test_a_socket_planted_by_an_outsider_gets_nothing_from_the_client(api, tmp_path, runtime, who):
    """A listener at our socket path that is not ours, or is sandboxed, is refused: no environment, no
    descriptors; the invocation runs the normal way."""
    env = environment(api, tmp_path, runtime, warm=True)
    shared = Path(f"/tmp/ma-shared-{os.getpid()}")
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    received = shared / "received"
    ready = shared / "ready"

    def listen() -> None:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(shared / "s.sock"))
        server.listen(1)
        ready.write_text("")
        server.settimeout(PATIENCE)  # the client's start, however loaded the machine
        connection, _ = server.accept()
        connection.settimeout(3)
        data = b""
        try:
            while chunk := connection.recv(65536):
                data += chunk
        except OSError:
            pass
        received.write_bytes(data)

    listener = _as_outsider(who, listen)
    try:
        eventually(ready.exists, "the planted listener ready")
        (runtime / "mini-agent").mkdir(mode=0o700, exist_ok=True)
        os.rename(shared / "s.sock", installed(f"paths.socket_path({str(runtime / 'mini-agent')!r})"))
        api.script(answer("Served here."))
        done = command(["-p", "hi"], env, cwd=tmp_path, stdin=subprocess.DEVNULL)
        assert (done.returncode, done.stdout) == (0, b"Served here.\n")
        os.waitpid(listener, 0)
        assert received.read_bytes() == b""  # it connected, saw who listened, and sent not a byte
    finally:
        subprocess.run(["rm", "-rf", str(shared)])


@pytest.mark.parametrize("who", OUTSIDERS)
def test_the_server_answers_no_outsider(tmp_path, runtime, who):
    """Not another user, and not a sandboxed command of ours asking for a run outside its sandbox."""
    env = environment(None, tmp_path, runtime, warm=True)
    pid = start(env)
    path = installed(f"paths.socket_path({str(runtime / 'mini-agent')!r})")
    os.chmod(runtime, 0o755)  # let `nobody` reach the socket: only the server's check is left to refuse it
    os.chmod(runtime / "mini-agent", 0o755)
    os.chmod(path, 0o777)
    answer_file = Path(f"/tmp/ma-answer-{os.getpid()}")

    def ask() -> None:
        try:
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.settimeout(PATIENCE)
            client.connect(path)
            protocol.send(client, {"op": "status"})  # what `mini-agent server status` asks: answered to us
            answer_file.write_bytes(client.recv(1000) or b"EOF")
        except (ConnectionResetError, BrokenPipeError):  # closed with our bytes unread: silent as an end
            answer_file.write_bytes(b"EOF")
        except OSError as exc:
            answer_file.write_text(repr(exc))

    try:
        ask()
        assert answer_file.read_bytes() not in (b"EOF", b""), "the same question from us is answered"
        answer_file.unlink()
        os.waitpid(_as_outsider(who, ask), 0)
        assert answer_file.read_bytes() == b"EOF"
        assert alive(pid)
    finally:
        os.chmod(runtime / "mini-agent", 0o700)
        answer_file.unlink(missing_ok=True)
