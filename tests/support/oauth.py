"""OAuth test helpers: the OAuth-protected MCP server (oauth_mcp_server.py) as a child process, a test "browser"
(httpx) that follows an authorization URL to its redirect, and `mini-agent mcp login` run in process with that
browser reading the URL the command prints, as a person would."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from support import HERE, PATIENCE, eventually

SERVER = HERE / "oauth_mcp_server.py"
PRINTED_URL = re.compile(rb"^  (http\S+)$", re.MULTILINE)


@dataclass
class OAuthServer:
    process: subprocess.Popen
    base: str

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def control(self, what: str) -> dict:
        return httpx.post(f"{self.base}/test/{what}", trust_env=False).json()

    def counts(self) -> dict:
        return httpx.get(f"{self.base}/test/counts", trust_env=False).json()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(PATIENCE)


def start_server(directory: Path) -> OAuthServer:
    port_file = directory / "oauth-port"
    process = subprocess.Popen([sys.executable, str(SERVER), str(port_file)])
    eventually(lambda: process.poll() is not None or port_file.exists(), "the OAuth MCP server listening")
    assert process.poll() is None, "the OAuth MCP server exited"
    return OAuthServer(process, f"http://127.0.0.1:{port_file.read_text()}")


@dataclass
class Browser:
    """Follows an authorization URL: the authorization endpoint approves at once and redirects to mini-agent's
    loopback listener. `first_forged`: before the real redirect, the listener gets one with a forged state."""

    first_forged: bool = False
    visits: list[tuple[str, int, str]] = field(default_factory=list)

    def __call__(self, authorization_url: str) -> None:
        with httpx.Client(trust_env=False, timeout=PATIENCE) as client:
            approved = client.get(authorization_url)
            self.visits.append((authorization_url, approved.status_code, approved.text))
            redirect = approved.headers["location"]
            if self.first_forged:
                parts = urlsplit(redirect)
                query = {key: values[0] for key, values in parse_qs(parts.query).items()}
                forged = parts._replace(query=urlencode({**query, "state": "forged-" + query["state"]})).geturl()
                answer = client.get(forged)
                self.visits.append((forged, answer.status_code, answer.text))
            answer = client.get(redirect)
            self.visits.append((redirect, answer.status_code, answer.text))


def login_in_process(
    args: list[str], variables: dict[str, str], cwd: Path, browse: Callable[[str], None] | None
) -> subprocess.CompletedProcess:
    """`mini-agent ARGS` (a login) in this process; `browse` gets the URL it prints, on another thread."""
    from mini_agent.cli.main import run_in_process
    from support.in_process import environment

    world = environment(b"", variables, cwd)
    finished = threading.Event()

    def person() -> None:
        found = eventually(
            lambda: finished.is_set() or PRINTED_URL.search(world.stdout.buffer.getvalue()), "the URL printed"
        )
        if browse is not None and found is not True:
            browse(found.group(1).decode())

    thread = threading.Thread(target=person, daemon=True)
    thread.start()
    status = run_in_process(list(args), world)
    finished.set()
    thread.join(PATIENCE)
    return subprocess.CompletedProcess(args, status, world.stdout.buffer.getvalue(), world.stderr.buffer.getvalue())
