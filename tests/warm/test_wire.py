"""The warm start's wire, as the client uses it: frames and descriptors, and nothing imported but C modules."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from mini_agent.warm import protocol

HEAVY = {"socket", "signal", "enum", "selectors", "collections", "typing", "re", "functools"}
"""What `socket` and `signal` themselves import: ~9 ms of every warm invocation, which the client does without."""


def test_the_client_loads_only_c_modules_for_its_socket_and_signals():
    code = "import sys, mini_agent.entry, mini_agent.warm.client; print(' '.join(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not HEAVY & set(done.stdout.split())


def test_a_frame_and_its_descriptors_cross_the_wire(tmp_path):
    client, server = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    files = [open(tmp_path / f"file{n}", "w+b") for n in range(3)]  # noqa: SIM115  (closed below)
    try:
        protocol.send(client, {"op": "run", "argv": ["mini-agent", "-p", "x" * 100_000]}, [f.fileno() for f in files])
        protocol.send(client, {"signal": 2})
        reader = protocol.Reader(server)
        first = reader.read(with_fds=True)
        assert first == {"op": "run", "argv": ["mini-agent", "-p", "x" * 100_000]}
        assert len(reader.fds) == 3
        for received, original in zip(reader.fds, files, strict=True):
            assert os.fstat(received).st_ino == os.fstat(original.fileno()).st_ino
        assert reader.read() == {"signal": 2}
        reader.close_fds()
        client.close()
        assert reader.read() is None
    finally:
        for file in files:
            file.close()
        server.close()
