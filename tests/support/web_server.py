"""A real HTTP server on 127.0.0.1 for tests: fixed responses and programmable routes, with hit counts.

with WebServer() as server:
    server.add("/page", b"<h1>Hi</h1>", content_type="text/html; charset=utf-8")
    server.route("/slow", lambda request: ...)   # full control over the raw response
    url = server.url("/page")
    server.hits["/page"]                         # how many requests reached that path
"""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Response:
    """A complete response: status, headers and body (Content-Length is added unless given)."""

    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


NOT_FOUND_PAGE = b"<html><head><style>h1 {color: red}</style></head><body><h1>No page here</h1></body></html>"

Handler = Callable[["RequestHandler"], None]
"""A route that writes its own response through the handler (send_response, wfile, ...)."""


class RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        path = urlsplit(self.path).path
        self.server.owner.hits[path] += 1
        route = self.server.owner.routes.get(path)
        try:
            if route is None:
                self.send_fixed(Response(NOT_FOUND_PAGE, 404, {"Content-Type": "text/html"}))
            elif isinstance(route, Response):
                self.send_fixed(route)
            else:
                route(self)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client stopped reading (oversize body, timeout): expected in these tests

    def send_fixed(self, response: Response) -> None:
        self.send_response(response.status)
        headers = {"Content-Length": str(len(response.body)), **response.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)

    def wait_for_shutdown(self, seconds: float) -> None:
        """Stall (a hanging server) until the test ends or `seconds` pass."""
        self.server.owner.stopping.wait(seconds)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server's naming
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: WebServer

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)  # a client hanging up is routine here


class WebServer:
    """Serves on 127.0.0.1 on a free port from a background thread while used as a context manager."""

    def __init__(self) -> None:
        self.routes: dict[str, Response | Handler] = {}
        self.hits: Counter[str] = Counter()
        self.stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), RequestHandler)
        self._server.owner = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def add(
        self,
        path: str,
        body: bytes | str = b"",
        *,
        status: int = 200,
        content_type: str = "text/html",
        headers: dict[str, str] | None = None,
    ) -> str:
        """Serve a fixed response at `path` (no Content-Type header when content_type is ""); returns its URL."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        all_headers = ({"Content-Type": content_type} if content_type else {}) | (headers or {})
        self.routes[path] = Response(data, status, all_headers)
        return self.url(path)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        """Answer `path` with a redirect to `location`; returns the URL of `path`."""
        return self.add(path, status=status, content_type="", headers={"Location": location})

    def route(self, path: str, handler: Handler) -> str:
        """Serve `path` with a function that writes the raw response; returns its URL."""
        self.routes[path] = handler
        return self.url(path)

    def url(self, path: str) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{path}"

    def __enter__(self) -> WebServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
