"""A real LiteLLM proxy on 127.0.0.1, routing one model name to a loopback Anthropic-compatible upstream.

with LiteLLMProxy(upstream_url, workdir) as proxy:
    proxy.url, proxy.master_key, proxy.model      # what a client needs
    proxy.log()                                   # what the proxy printed so far

The proxy runs as `litellm --config ...` from this interpreter's environment (the `litellm[proxy]` test extra),
in its own process group, with a minimal environment and HOME in `workdir`: it reads no file outside the
repository and `workdir`, keeps its model cost map local and makes no outbound call. Its retries, fallbacks and
cooldowns are off so each client request reaches the upstream exactly once and one failure does not bench the
upstream for the next test.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

LITELLM = Path(sys.executable).parent / "litellm"
START_TIMEOUT = 90.0
MODEL = "claude-test"
MASTER_KEY = "sk-litellm-master-0123456789"
UPSTREAM_KEY = "sk-ant-upstream-dummy"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def proxy_config(upstreams: dict[str, str | dict], litellm_settings: dict | None = None) -> dict:
    """Each model name routed to its upstream, a master key required, nothing that retries or benches a model.

    `upstreams` maps a model name to the base URL of the Anthropic-compatible server that answers for it, or to
    litellm_params of its own (`api_base` and e.g. `keepalive_seconds`)."""
    models = []
    for name, upstream in upstreams.items():
        params = {"api_base": upstream} if isinstance(upstream, str) else dict(upstream)
        models.append(
            {"model_name": name, "litellm_params": {"model": f"anthropic/{name}", "api_key": UPSTREAM_KEY, **params}}
        )
    return {
        "model_list": models,
        "general_settings": {"master_key": MASTER_KEY},
        "litellm_settings": {"num_retries": 0, "request_timeout": 30, **(litellm_settings or {})},
        "router_settings": {"num_retries": 0, "disable_cooldowns": True},
    }


def proxy_environment(workdir: Path) -> dict[str, str]:
    """Only what the proxy needs: no inherited keys, database URLs or proxies; HOME inside workdir."""
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "PYTHONUNBUFFERED": "1",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # never fetch the cost map from the internet
        "LITELLM_MODE": "PRODUCTION",  # no .env loading
        "DISABLE_ADMIN_UI": "True",
        "NO_PROXY": "*",
    }


class LiteLLMProxy:
    def __init__(
        self,
        upstream_url: str,
        workdir: Path,
        more: dict[str, str | dict] | None = None,
        litellm_settings: dict | None = None,
    ) -> None:
        """`upstream_url` answers for MODEL; `more` routes further model names to their own upstreams."""
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.master_key = MASTER_KEY
        self.model = MODEL
        self.config_path = workdir / "litellm-config.json"  # JSON is YAML: no YAML writer needed
        self.config_path.write_text(json.dumps(proxy_config({MODEL: upstream_url, **(more or {})}, litellm_settings)))
        self.log_path = workdir / "litellm.log"
        self.process: subprocess.Popen | None = None
        self.started_in: float | None = None
        """Seconds from launch until /health/readiness answered 200."""

    def start(self) -> LiteLLMProxy:
        if not LITELLM.exists():
            raise RuntimeError(f"no {LITELLM}: install the test extra (pip install -e '.[test]')")
        for attempt in range(3):
            began = time.monotonic()
            self._launch()
            try:
                self._wait_ready(began)
                break
            except RuntimeError:
                self.stop()
                taken = "address already in use" in self.log().lower()
                if not taken or attempt == 2:
                    raise
                self._move_to(free_port())  # another process took the free port first
            except BaseException:
                self.stop()
                raise
        self.started_in = time.monotonic() - began
        return self

    def _launch(self) -> None:
        command = [str(LITELLM), "--config", str(self.config_path), "--host", "127.0.0.1", "--port", str(self.port)]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                command,
                cwd=self.workdir,
                env=proxy_environment(self.workdir),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, killed whole at the end
            )

    def _move_to(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"

    def _wait_ready(self, began: float) -> None:
        while time.monotonic() - began < START_TIMEOUT:
            if _exited(self.process.pid):
                raise RuntimeError(f"litellm exited before it was ready:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/health/readiness", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"litellm was not ready after {START_TIMEOUT:.0f} s:\n{self.log()}")

    def stop(self) -> None:
        """SIGTERM to the proxy's process group, SIGKILL to whatever is left; the leader is reaped last, so the
        group's id cannot have been reused by then."""
        process, self.process = self.process, None
        if process is None or process.pid <= 1:
            return
        group = process.pid
        for sig, grace in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + grace
            while not _exited(process.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if sig == signal.SIGTERM and _exited(process.pid):
                try:
                    os.killpg(group, signal.SIGKILL)  # workers it may have left behind
                except ProcessLookupError:
                    pass
                break
        process.wait(timeout=10)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def __enter__(self) -> LiteLLMProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _exited(pid: int) -> bool:
    """Whether a child has exited, without reaping it (its pid, and so its process group's id, stay taken)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def litellm_version() -> str:
    from importlib.metadata import version

    return version("litellm")


# ---- an upstream that answers with exact bytes --------------------------------------------------------------


@dataclass
class RawReply:
    """One answer written as given: status, headers and body bytes (no Content-Length unless given: the
    connection closes after it). `hang_up` closes the connection without answering; `delay` waits first."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    hang_up: bool = False
    delay: float = 0.0

    @classmethod
    def from_fixture(cls, path: Path) -> RawReply:
        """A response recorded in tests/fixtures/endpoints: a .json envelope, its body inline or in a .sse file."""
        recorded = json.loads(path.read_text())
        body = (
            (path.parent / recorded["body_file"]).read_bytes() if "body_file" in recorded else recorded["body"].encode()
        )
        # The body is stored decoded and whole: it is sent as is, delimited by closing the connection.
        dropped = ("content-length", "content-encoding", "transfer-encoding", "connection")
        headers = {k: v for k, v in recorded["headers"].items() if k.lower() not in dropped}
        return cls(recorded["status"], headers, body)


class RawUpstream:
    """POST /v1/messages on 127.0.0.1 answered from a queue of RawReply; every request is recorded."""

    def __init__(self) -> None:
        self.replies: list[RawReply] = []
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                with upstream._lock:
                    upstream.requests.append({"path": self.path, "headers": dict(self.headers), "body": raw})
                    reply = upstream.replies.pop(0) if upstream.replies else None
                self.close_connection = True
                if reply is None:
                    reply = RawReply(500, {"content-type": "application/json"}, b'{"error": "unscripted request"}')
                time.sleep(reply.delay)
                try:
                    if reply.hang_up:
                        self.connection.shutdown(socket.SHUT_RDWR)
                        return
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("connection", "close")
                    self.end_headers()
                    self.wfile.write(reply.body)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def script(self, *replies: RawReply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def __enter__(self) -> RawUpstream:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
