"""The wire between the client and the server: length-prefixed `marshal` frames over a Unix stream socket.

The first frame of an invocation carries the client's stdin, stdout and stderr as SCM_RIGHTS. `marshal` is
built into the interpreter (no import cost) and both ends are the same user's unconfined processes of the same
Python, which each end checks (`untrusted`) before it reads or sends a byte.

The client's side of this module runs in every warm invocation before anything else, so it uses the C modules
under `socket` (`_socket`; descriptors packed with `struct`, as `socket.send_fds` does with `array`): `socket`
itself imports `enum`, `selectors` and `collections`, ~9 ms of a warm REPL's ~90 ms. The server's sockets are
`socket.socket`s, which are `_socket.socket`s.
"""

from __future__ import annotations

import _socket
import marshal
import os
import struct

FD_SIZE = struct.calcsize("i")

HEADER = 4
MAX_FRAME = 16 * 1024 * 1024
"""An environment is kilobytes; anything near this is not a client of ours."""


def encode(message: dict) -> bytes:
    body = marshal.dumps(message)
    return len(body).to_bytes(HEADER, "big") + body


def send(sock: _socket.socket, message: dict, fds: list[int] | None = None) -> None:
    data = encode(message)
    if fds:
        rights = struct.pack(f"{len(fds)}i", *fds)
        sent = sock.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, rights)])
        data = data[sent:]
    if data:
        sock.sendall(data)


def recv_fds(sock: _socket.socket, size: int, most: int) -> tuple[bytes, list[int]]:
    """Up to `size` bytes, and the descriptors that came with them (at most `most`), as `socket.recv_fds`."""
    chunk, ancillary, _flags, _address = sock.recvmsg(size, _socket.CMSG_LEN(most * FD_SIZE))
    fds: list[int] = []
    for level, kind, data in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            count = len(data) // FD_SIZE
            fds.extend(struct.unpack(f"{count}i", data[: count * FD_SIZE]))
    return chunk, fds


class Reader:
    """Frames from a stream socket, the file descriptors that came with them kept aside."""

    def __init__(self, sock: _socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.fds: list[int] = []

    def read(self, with_fds: bool = False) -> dict | None:
        """The next frame; None at end of stream (a frame cut short counts as the end)."""
        while True:
            message = self.take()
            if message is not None:
                return message
            if with_fds:
                chunk, fds = recv_fds(self.sock, 65536, 8)
                self.fds.extend(fds)
            else:
                chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk

    def take(self) -> dict | None:
        """A whole frame already received, if any."""
        if len(self.buffer) < HEADER:
            return None
        size = int.from_bytes(self.buffer[:HEADER], "big")
        if size > MAX_FRAME:
            raise ValueError("frame too large")
        if len(self.buffer) < HEADER + size:
            return None
        body, self.buffer = self.buffer[HEADER : HEADER + size], self.buffer[HEADER + size :]
        message = marshal.loads(body)
        if not isinstance(message, dict):
            raise ValueError("not a message")
        return message

    def close_fds(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []


def untrusted(sock: _socket.socket) -> str | None:
    """Why the process at the other end must not be dealt with, or None for one of this user's own, unconfined.

    Another user's process gets nothing. Nor does a sandboxed one of ours: a command the agent runs could
    otherwise ask the server for a run outside its sandbox, or plant a listener where the sandbox cannot hide
    the directory (Landlock, in /tmp) and be handed the next invocation's environment and terminal.
    """
    option = getattr(_socket, "SO_PEERCRED", None)
    if option is None:
        return "the platform cannot tell who is at the other end"
    pid, uid, _gid = peer(sock)
    if uid != os.getuid():
        return f"the other end runs as uid {uid}"
    if confined(pid):
        return "the other end runs confined (no_new_privs)"
    return None


def peer(sock: _socket.socket) -> tuple[int, int, int]:
    """The pid (0 when it lives in a PID namespace this process cannot see), uid and gid at the other end."""
    return struct.unpack("3i", sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, struct.calcsize("3i")))


NAMESPACES = ("net", "mnt", "pid", "user", "uts", "ipc", "cgroup")


def elsewhere(pid: int) -> str | None:
    """Why a process does not see the world this one sees, or None. A worker forked here would run with this
    process's network, files, PIDs, root and limits, not the client's: a run started inside `unshare -n`, a
    container sharing /tmp or a chroot would quietly get the outside back. What cannot be read counts as
    different: the run then goes the normal way, which is never wrong, only slower."""
    if pid <= 0:
        return "the client lives in a PID namespace the server cannot see"
    try:
        for name in NAMESPACES:
            if os.readlink(f"/proc/{pid}/ns/{name}") != os.readlink(f"/proc/self/ns/{name}"):
                return f"the client runs in another {name} namespace"
        theirs, ours = os.stat(f"/proc/{pid}/root"), os.stat("/proc/self/root")
        if (theirs.st_dev, theirs.st_ino) != (ours.st_dev, ours.st_ino):
            return "the client runs under another root directory"
        if _read(f"/proc/{pid}/limits") != _read("/proc/self/limits"):
            return "the client runs with other resource limits"
    except OSError:
        return "the client's namespaces cannot be read"
    return None


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def confined(pid: int) -> bool:
    """Whether a process runs with no_new_privs. Every sandboxed command does (bubblewrap and Landlock set it,
    and nothing can unset it); a person's shell and the server it started do not. Unreadable: confined."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"NoNewPrivs:"):
                    return line.split()[1] != b"0"
    except OSError:
        return True
    return False  # a kernel older than the field (4.10) has no such marker to read
