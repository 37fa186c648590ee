"""The one sanctioned fake: a loopback server that speaks the Anthropic Messages API.

It serves scripted replies to POST /v1/messages, as JSON or as a server-sent-event stream with the real
event sequence, injects faults (status codes with headers, a stream cut mid-event, an error event, a hang),
and records every request so tests assert on what was actually sent. An unscripted request is answered
with a 500 and recorded as a failure; `assert_complete()` fails on failures and on unconsumed replies.
Every message request is held to the API's rules (request_rules.py): one the API would reject is answered
with its 400 and recorded as a failure, so each test that talks to this server checks what mini-agent sends.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from support.request_rules import problems

_ids = itertools.count(1)


# ---- content helpers -------------------------------------------------------------------------------------


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def tool_use(name: str, input: dict, id: str | None = None) -> dict:
    return {"type": "tool_use", "id": id or f"toolu_{next(_ids):04d}", "name": name, "input": input}


def thinking(value: str, signature: str = "sig-abc") -> dict:
    return {"type": "thinking", "thinking": value, "signature": signature}


# ---- replies ---------------------------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer to one request."""

    content: list[dict] = field(default_factory=list)
    stop_reason: str | None = None
    usage: dict = field(default_factory=lambda: {"input_tokens": 100, "output_tokens": 20})
    status: int = 200
    headers: dict = field(default_factory=dict)
    error: dict | None = None
    raw_sse: bytes | None = None
    json_body: Any = None
    hang_up: bool = False
    """Close the connection without answering, as a server does that drops a kept-alive connection."""
    """Answer 200 with this JSON, streaming request or not (gateways' error bodies, servers that never stream)."""
    cut_after_events: int | None = None
    error_event_after: int | None = None
    delay: float = 0.0
    stall_after_events: int | None = None
    """Send this many events, then nothing more until the client gives up (a stream that stalls mid-way)."""
    event_delay: float = 0.0
    """Seconds between streamed events, to pace a reply like a real model does."""
    model: str = "claude-test"
    extra: dict = field(default_factory=dict)
    measured: bool = False
    """Report input_tokens as the request's size (a quarter of its bytes), like a real model would."""
    raw_inputs: dict = field(default_factory=dict)
    """Tool id -> the exact `partial_json` text streamed for that call's input, whole or not (a cut call)."""

    def message(self) -> dict:
        stop = self.stop_reason or ("tool_use" if any(b["type"] == "tool_use" for b in self.content) else "end_turn")
        return {
            "id": f"msg_{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self.content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": self.usage,
            **self.extra,
        }


def answer(
    *content: dict | str,
    stop_reason: str | None = None,
    usage: dict | None = None,
    measured: bool = False,
    **extra: Any,
) -> Reply:
    """A normal assistant reply; strings become text blocks. `measured`: input_tokens from the request's size."""
    blocks = [text(item) if isinstance(item, str) else item for item in content]
    reply = Reply(content=blocks, stop_reason=stop_reason, extra=extra, measured=measured)
    if usage is not None:
        reply.usage = usage
    return reply


def failure(status: int, error_type: str, message: str, headers: dict | None = None) -> Reply:
    """An HTTP error answer in the API's error shape."""
    return Reply(status=status, headers=headers or {}, error={"type": error_type, "message": message})


def replay(path: Path) -> Reply:
    """Serve a recorded SSE stream byte for byte."""
    return Reply(raw_sse=path.read_bytes())


def cut(reply: Reply, after_events: int) -> Reply:
    """Send the first events of a streamed reply, then close the connection mid-event."""
    reply.cut_after_events = after_events
    return reply


def error_event(reply: Reply, after_events: int = 0) -> Reply:
    """Send some events, then an in-stream `error` event (overloaded)."""
    reply.error_event_after = after_events
    return reply


def cut_input(reply: Reply, call_id: str, keep: int) -> Reply:
    """Stream only the first `keep` characters of that call's input JSON, the reply otherwise ending normally
    (as a gateway or local server that cuts a reply still says `tool_use`)."""
    call = next(block for block in reply.content if block.get("id") == call_id)
    reply.raw_inputs[call_id] = json.dumps(call["input"])[:keep]
    return reply


def sse_events(message: dict, raw_inputs: dict | None = None) -> list[tuple[str, dict]]:
    """The event sequence the real API sends for a message, with deltas split like the real thing."""
    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        kind = block["type"]
        if kind == "text":
            events.append(_block_start(index, {"type": "text", "text": ""}))
            events.append(("ping", {"type": "ping"}))
            for piece in _pieces(block["text"]):
                events.append(_delta(index, {"type": "text_delta", "text": piece}))
        elif kind == "tool_use":
            events.append(_block_start(index, dict(block, input={})))
            raw = (raw_inputs or {}).get(block["id"])
            for piece in _pieces(json.dumps(block["input"]) if raw is None else raw):
                events.append(_delta(index, {"type": "input_json_delta", "partial_json": piece}))
        elif kind == "thinking":
            events.append(_block_start(index, {"type": "thinking", "thinking": "", "signature": ""}))
            for piece in _pieces(block["thinking"]):
                events.append(_delta(index, {"type": "thinking_delta", "thinking": piece}))
            events.append(_delta(index, {"type": "signature_delta", "signature": block["signature"]}))
        else:
            events.append(_block_start(index, block))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    usage = {"output_tokens": message["usage"].get("output_tokens", 0)}
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _block_start(index: int, block: dict) -> tuple[str, dict]:
    return "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict) -> tuple[str, dict]:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}


def _pieces(value: str, size: int = 7) -> list[str]:
    return [value[i : i + size] for i in range(0, len(value), size)] or [""]


def _frame(name: str, data: dict) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


# ---- the server ------------------------------------------------------------------------------------------


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict
    body: Any
    at: float = field(default_factory=time.monotonic)
    """When the request had been read (time.monotonic of the server's process)."""
    answered_at: float | None = None
    """When the last byte of the answer had been written."""


class FakeAnthropicAPI:
    """A Messages API on 127.0.0.1 with a script of replies and a record of requests."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.routes: list[tuple[Callable[[Any], bool], list[Reply]]] = []
        self.requests: list[Recorded] = []
        self.failures: list[str] = []
        self.model_info: dict | None = None
        self.validate = True
        """Answer a request the API would reject with its 400 and record it as a failure (request_rules.py)."""
        self.other_blocks = False
        """Accept block types of the endpoint's own in assistant turns (a llama.cpp or vLLM family's)."""
        self.pages: dict[str, Any] = {}
        """Other JSON the server answers, by "METHOD /path" (e.g. "GET /props"): an endpoint family's own shapes."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # stop() waits for the serving loop's next poll: the default half second, paid by every test, added minutes
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropicAPI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self.replies.extend(replies)

    def route(self, matches: Callable[[Any], bool], *replies: Reply) -> None:
        """Answer requests whose body `matches` from their own script (e.g. summaries, whenever they come)."""
        with self._lock:
            self.routes.append((matches, list(replies)))

    @property
    def message_requests(self) -> list[dict]:
        """Bodies of every POST /v1/messages, in order."""
        return [r.body for r in self.requests if r.method == "POST" and r.path.startswith("/v1/messages")]

    def assert_complete(self) -> None:
        assert not self.failures, f"fake API failures: {self.failures}"
        assert not self.replies, f"{len(self.replies)} scripted replies were never requested"
        assert not any(queue for _, queue in self.routes), "routed replies were never requested"

    def _next(self, body: Any) -> Reply | None:
        with self._lock:
            for matches, queue in self.routes:
                if matches(body):
                    return queue.pop(0) if queue else None
            return self.replies.pop(0) if self.replies else None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in separate writes: with Nagle's algorithm on, the body of every
            # keep-alive request after the first waited ~40 ms for the client's delayed ACK, as no real API does.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _record(self, body: Any) -> None:
                self.recorded = Recorded(self.command, self.path, dict(self.headers), body)
                with api._lock:
                    api.requests.append(self.recorded)

            def do_GET(self) -> None:
                self._record(None)
                try:
                    self._get()
                finally:
                    self.recorded.answered_at = time.monotonic()

            def _get(self) -> None:
                if self.path.startswith("/v1/models/") and api.model_info is not None:
                    return self._json(200, api.model_info)
                if f"GET {self.path}" in api.pages:
                    return self._json(200, api.pages[f"GET {self.path}"])
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "not found"}})

            def do_POST(self) -> None:
                try:
                    self._post()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer
                if getattr(self, "recorded", None) is not None:
                    self.recorded.answered_at = time.monotonic()

            def _post(self) -> None:
                length = int(self.headers.get("content-length", 0))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                self._record(body)
                if f"POST {self.path}" in api.pages:
                    return self._json(200, api.pages[f"POST {self.path}"])
                if not self.path.startswith("/v1/messages"):
                    return self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "?"}})
                checked = api.validate and self.path.split("?")[0] == "/v1/messages"
                invalid = problems(body, other_blocks=api.other_blocks) if checked else []
                if invalid:
                    number = len(api.message_requests)
                    api.failures.append(f"invalid request #{number}: {'; '.join(invalid)}")
                    error = {"type": "invalid_request_error", "message": "; ".join(invalid)}
                    return self._json(400, {"type": "error", "error": error})
                reply = api._next(body)
                if reply is None:
                    api.failures.append(f"unscripted request #{len(api.message_requests)}")
                    return self._json(500, {"type": "error", "error": {"type": "api_error", "message": "unscripted"}})
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.hang_up:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return None
                if reply.error is not None:
                    return self._json(reply.status, {"type": "error", "error": reply.error}, reply.headers)
                streaming = isinstance(body, dict) and body.get("stream")
                if reply.json_body is not None:
                    return self._json(200, reply.json_body, reply.headers)
                if reply.raw_sse is not None:
                    return self._sse_bytes(reply.raw_sse)
                if reply.measured:
                    reply.usage = dict(reply.usage, input_tokens=len(raw) // 4)
                message = reply.message()
                if not streaming:
                    return self._json(200, message, reply.headers)
                self._sse(message, reply)

            def _json(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_{next(_ids)}")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _start_stream(self) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                self.close_connection = True

            def _sse_bytes(self, data: bytes) -> None:
                self._start_stream()
                self.wfile.write(data)

            def _sse(self, message: dict, reply: Reply) -> None:
                self._start_stream()
                for count, (name, data) in enumerate(sse_events(message, reply.raw_inputs)):
                    if reply.error_event_after is not None and count == reply.error_event_after:
                        error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
                        self.wfile.write(_frame("error", error))
                        return
                    if reply.cut_after_events is not None and count == reply.cut_after_events:
                        frame = _frame(name, data)
                        self.wfile.write(frame[: len(frame) // 2])
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                    if reply.stall_after_events is not None and count == reply.stall_after_events:
                        self.wfile.flush()
                        self.connection.recv(1)  # returns when the client closes the connection (or sends)
                        return
                    if reply.event_delay and count:
                        time.sleep(reply.event_delay)
                    self.wfile.write(_frame(name, data))
                    self.wfile.flush()

        return Handler


def sse_bytes(events: list[tuple[str, dict]]) -> bytes:
    """A stream of the given (event name, data) frames, to serve with Reply(raw_sse=...)."""
    return b"".join(_frame(name, data) for name, data in events)


def message_of(reply: Reply) -> dict:
    """The message a scripted reply stands for, to build its events from and then bend them."""
    return reply.message()
