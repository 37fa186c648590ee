"""The MCP reference server `@modelcontextprotocol/server-everything` (Node), for the tests that check mini-agent
against a server nobody here wrote: its resources, resource templates and prompts, over stdio, streamable HTTP
and SSE.

Pinned (VERSION) and kept in `~/.cache/mini-agent-tests/server-everything/<version>/` (not under /tmp, which the
sandbox tests hide). A machine without it installs it there once with `npm install` (about half a minute here,
INSTALL_TIMEOUT at most); a machine without node and npm, or whose npm registry cannot be reached, skips these
tests and says why, and remembers a failed install for a day (FAILED_MARK) so later runs skip at once.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from support import PATIENCE, eventually

PACKAGE = "@modelcontextprotocol/server-everything"
VERSION = "2026.8.31"
CACHE = Path.home() / ".cache" / "mini-agent-tests" / "server-everything"
HOME = CACHE / VERSION
BIN = HOME / "node_modules" / ".bin" / "mcp-server-everything"
FAILED_MARK = CACHE / f"{VERSION}.failed"
INSTALL_TIMEOUT = 60
RETRY_AFTER = 24 * 3600


def server_everything() -> Path:
    """The server's command, installed once if need be; skips the test when it cannot be."""
    if BIN.exists():
        return BIN
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip(f"{PACKAGE} needs node and npm, which this machine does not have")
    if FAILED_MARK.exists() and time.time() - FAILED_MARK.stat().st_mtime < RETRY_AFTER:
        pytest.skip(f"installing {PACKAGE}@{VERSION} failed within the last day: {FAILED_MARK.read_text()[:300]}")
    CACHE.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{VERSION}.", dir=CACHE))
    command = ["npm", "install", "--prefix", str(staging), "--no-audit", "--no-fund", "--silent",
               f"{PACKAGE}@{VERSION}"]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
        problem = "" if done.returncode == 0 else (done.stderr or done.stdout).strip()
    except subprocess.TimeoutExpired:
        problem = f"npm install took over {INSTALL_TIMEOUT} s (is the registry reachable?)"
    if problem:
        shutil.rmtree(staging, ignore_errors=True)
        FAILED_MARK.write_text(problem)
        pytest.skip(f"installing {PACKAGE}@{VERSION} failed: {problem[:300]}")
    os.replace(staging, HOME)
    return BIN


@contextmanager
def listening(transport: str) -> Iterator[int]:
    """The server over `streamableHttp` or `sse` on a free loopback port; yields the port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [str(server_everything()), transport],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        eventually(lambda: server.poll() is not None or _answers(port), f"server-everything on port {port}")
        assert server.poll() is None, "server-everything exited"
        yield port
    finally:
        server.terminate()
        server.wait(PATIENCE)


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False
