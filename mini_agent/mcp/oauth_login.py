"""`mini-agent mcp login NAME` and `logout NAME`: the one place an OAuth flow asks a human.

A login forgets what was stored for the server, listens on 127.0.0.1 (a random port) for the browser's
redirect, and connects the way a session does (connection.py) with the login's handlers: the SDK discovers
the authorization server, registers mini-agent as a client for this redirect URI, and hands over the
authorization URL, which is shown (the caller sanitises it for the terminal) and opened in a browser when there
is a display and it is http(s). The listener answers only `/callback` with the `state` of that URL; anything
else is refused and it goes on waiting, up to the time limit. The tokens are then stored (oauth_store.py).
"""

from __future__ import annotations

import os
import secrets as random
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mini_agent import threads
from mini_agent.mcp.connection import Connection
from mini_agent.mcp.oauth import LoginHandlers, UnsafeEndpoint, safe_endpoint
from mini_agent.mcp.oauth_store import forget
from mini_agent.mcp.servers import ServerDef, expand

LOGIN_TIMEOUT = 300.0
"""Seconds a login waits for the browser to come back."""
CALLBACK = "/callback"
WAITED = "Logged in. You can close this page and go back to mini-agent."
REFUSED = "This page is not the login mini-agent is waiting for (its state does not match)."


class LoginFailed(Exception):
    """Why a login did not end with tokens; the text is safe to show (no token, no code)."""


@dataclass(frozen=True)
class LoggedIn:
    server: str
    tools: int


def login(
    server: ServerDef,
    data_dir: Path,
    show: Callable[[str], None],
    secrets: Any = None,
    browser: bool = True,
    timeout: float = LOGIN_TIMEOUT,
) -> LoggedIn:
    """Run the authorization flow for a remote server and keep its tokens; LoginFailed says why it did not."""
    if server.transport not in ("http", "sse"):
        raise LoginFailed(f"{server.name} is a {server.transport} server: only remote (http, sse) servers log in.")
    url = expand(server.url)
    forget(data_dir, url)  # a fresh registration for this redirect URI, fresh tokens
    listener = _Listener()
    handlers = listener.handlers(url, show, browser and _has_display(), timeout)
    connection = Connection(server, lambda _: None, secrets, data_dir=data_dir, login=handlers)
    try:
        connection.start()
        connection.wait_ready(timeout + 60)  # the flow's own limit ends it first
    finally:  # Ctrl-C included
        connection.stop()
        listener.close()
    if connection.status != "ready":
        raise LoginFailed(listener.failure or connection.error or "the server did not answer")
    if not listener.asked:
        raise LoginFailed(f"{server.name} did not ask for a login: it answers without one.")
    return LoggedIn(server.name, len(connection.tools))


def logout(server: ServerDef, data_dir: Path) -> bool:
    """Delete a server's tokens and registration; False when there were none."""
    return forget(data_dir, expand(server.url))


def _has_display() -> bool:
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class _Listener:
    """The loopback redirect listener: the standard library's HTTP server on its own thread, answering the one
    redirect whose state matches."""

    def __init__(self) -> None:
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server name
                status, text = listener.arrived(self.path)
                body = f"<!doctype html><title>mini-agent</title><p>{text}</p>".encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass  # the query holds the code: never on the terminal

        # A thread per request: a connection that never sends its request must not keep the redirect waiting.
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.state: str | None = None
        self.asked = False
        self.failure = ""
        self._arrived = threading.Event()
        self._lock = threading.Lock()
        self._result: Any = None
        self._thread = threads.new(self.server.serve_forever, name="oauth-redirect")
        self._thread.start()

    def handlers(self, configured: str, show: Callable[[str], None], browser: bool, timeout: float) -> LoginHandlers:
        async def redirect(authorization_url: str) -> None:
            why = safe_endpoint(authorization_url, configured)
            if why:
                self.failure = f"refused the authorization URL the server gave: {why}"
                raise UnsafeEndpoint(self.failure)
            self.state = (parse_qs(urlsplit(authorization_url).query).get("state") or [""])[0] or None
            self.asked = True
            show(authorization_url)
            if browser:
                from mini_agent.processes.browser import open_page

                threads.start(open_page, authorization_url, name="oauth-browser")

        async def callback():
            import anyio

            arrived = await anyio.to_thread.run_sync(self._arrived.wait, timeout, abandon_on_cancel=True)
            if not arrived:
                self.failure = f"the browser did not come back within {timeout:g} s"
                raise LoginFailed(self.failure)
            if isinstance(self._result, LoginFailed):
                self.failure = str(self._result)
                raise self._result
            return self._result

        return LoginHandlers(f"http://127.0.0.1:{self.port}{CALLBACK}", redirect, callback)

    def arrived(self, path: str) -> tuple[int, str]:
        """One request to the listener (its thread): the awaited redirect ends the wait, anything else is
        refused."""
        from mcp.shared.auth import AuthorizationCodeResult

        parts = urlsplit(path)
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        state = query.get("state", "")
        expected = self.state
        if parts.path != CALLBACK or not expected or not random.compare_digest(state.encode(), expected.encode()):
            return 400, REFUSED
        with self._lock:
            if self._arrived.is_set():
                return 400, "This login is over."
            if query.get("error") or not query.get("code"):
                said = " ".join(f"{query.get('error', 'no code')} {query.get('error_description', '')}".split())
                self._result = LoginFailed(f"the authorization server refused: {said[:200]}")
            else:
                self._result = AuthorizationCodeResult(code=query["code"], state=state, iss=query.get("iss"))
            self._arrived.set()
        return (
            (400, "The login did not succeed; see the terminal.")
            if isinstance(self._result, LoginFailed)
            else (200, WAITED)
        )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
