"""The job table below the tools: which loopback port a job alone listens on (so web_fetch may reach it), with
the user's own services beside it; the spool's cap; a job's spool kept from sandboxed commands."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import eventually

from mini_agent.processes.jobs import JobTable
from mini_agent.processes.spool import Spool

SERVER = """
import socket, sys
family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
s = socket.socket(family)
if sys.argv[3] == "reuseport":
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
if sys.argv[3] == "v6only":
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen()
print("LISTENING", s.getsockname()[1], flush=True)
import signal
signal.pause()  # listening until the test stops it
"""


@pytest.fixture
def table(tmp_path):
    jobs = JobTable(tmp_path / "data")
    yield jobs
    jobs.stop_all(grace=0)


def listen_in_job(table: JobTable, tmp_path: Path, address: str, port: int = 0, reuse: str = "no") -> tuple:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    job = table.start(
        "server", [sys.executable, str(script), address, str(port), reuse], dict(os.environ), tmp_path, None, "none"
    )
    # The whole line: the job's output may reach the spool in more than one piece.
    eventually(lambda: b"\n" in job.spool.read(0, 100).data or not job.running, "the job listening")
    line = job.spool.read(0, 100).data.decode()
    assert "LISTENING" in line, line
    return job, int(line.split()[1])


def users_service(address: str, port: int = 0, reuse: bool = False) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    service = socket.socket(family)
    if reuse:
        service.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    service.bind((address, port))
    service.listen()
    return service


def test_a_port_only_the_job_listens_on_is_the_jobs_and_the_users_own_service_is_not(table, tmp_path):
    job, port = listen_in_job(table, tmp_path, "127.0.0.1")
    assert table.serving("127.0.0.1", port) is job
    assert table.serving("::ffff:127.0.0.1", port) is job
    with users_service("127.0.0.1") as service:
        assert table.serving("127.0.0.1", service.getsockname()[1]) is None
    table.stop(job, "the model", grace=0)
    assert table.serving("127.0.0.1", port) is None  # a stopped job serves nothing: the port may change hands


def test_a_job_binding_the_port_of_a_users_service_does_not_make_that_service_the_jobs(table, tmp_path):
    with users_service("127.0.0.1", reuse=True) as service:
        port = service.getsockname()[1]
        job, _ = listen_in_job(table, tmp_path, "127.0.0.1", port, "reuseport")  # SO_REUSEPORT: both listen
        assert table.serving("127.0.0.1", port) is None
    with users_service("127.0.0.1") as service:  # the user's service on IPv4, the job on the IPv6 wildcard
        port = service.getsockname()[1]
        other, _ = listen_in_job(table, tmp_path, "::", port, "v6only")
        assert table.serving("127.0.0.1", port) is None
        assert table.serving("::1", port) is other  # only the job answers there


def test_the_spool_directory_is_the_agents_private_one_and_a_killed_agents_leftovers_are_swept(tmp_path):
    data = tmp_path / "data"
    (data / "jobs" / "999999999-dead").mkdir(parents=True)
    table = JobTable(data)
    try:
        job = table.start("true", ["true"], dict(os.environ), tmp_path, None, "none")
        assert job.spool.path.parent.parent == data / "jobs"
        assert not (data / "jobs" / "999999999-dead").exists()
        assert (job.spool.path.parent.stat().st_mode & 0o077) == 0
    finally:
        table.stop_all(grace=0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(min_size=0, max_size=300), max_size=40), st.integers(min_value=16, max_value=400))
def test_a_spool_keeps_at_most_its_cap_and_a_reader_gets_every_kept_byte_in_order(tmp_path_factory, writes, cap):
    path = tmp_path_factory.mktemp("spool") / "out"
    spool = Spool(path, cap)
    try:
        offset, seen = 0, b""
        everything = b""
        for data in writes:
            spool.append(data)
            everything += data
            assert path.stat().st_size <= cap
            chunk = spool.read(offset, 1 << 20)
            seen = seen + chunk.data if not chunk.dropped else chunk.data
            assert everything.endswith(seen) and chunk.end == len(everything)
            offset = chunk.end
    finally:
        spool.close()
