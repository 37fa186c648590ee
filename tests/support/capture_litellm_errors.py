"""Record what a real LiteLLM proxy answers on /v1/messages when its Anthropic upstream fails.

    .venv/bin/python tests/capture_litellm_errors.py [OUT_DIR]   (default: tests/fixtures/endpoints)

Starts the installed `litellm` proxy on loopback as tests/litellm_proxy.py configures it (plus a model with the
operator's SSE keepalive on), puts failing upstreams behind it (tests/fake_api.py for Anthropic-shaped
errors and streams, a raw server for what no Anthropic server sends), sends each request the way the anthropic
SDK does, and writes one `litellm__<case>.json` per case: the status, every response header and the body exactly
as received after content decoding; an event-stream body goes byte for byte into `litellm__<case>.sse` beside it.
Not a test: run by hand when LiteLLM is upgraded, then compare with git diff.
"""

from __future__ import annotations

import json
import sys
import tempfile
from datetime import date
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from support.fake_api import FakeAnthropicAPI, Reply, answer, cut, error_event, failure  # noqa: E402
from support.litellm_proxy import MODEL, LiteLLMProxy, RawReply, RawUpstream, litellm_version  # noqa: E402

RAW_MODEL = "claude-raw"
KEEPALIVE_MODEL = "claude-keepalive"
LONG = "prompt is too long: 215000 tokens > 200000 maximum"
HTML_502 = (
    b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"
)


def fake_cases() -> list[tuple[str, str, callable]]:
    """(case, what the upstream does, a factory of the fake's reply)."""
    return [
        (
            "upstream-500",
            "HTTP 500 api_error 'Internal server error'",
            lambda: failure(500, "api_error", "Internal server error"),
        ),
        (
            "upstream-529",
            "HTTP 529 overloaded_error 'Overloaded'",
            lambda: failure(529, "overloaded_error", "Overloaded"),
        ),
        (
            "upstream-429",
            "HTTP 429 rate_limit_error with retry-after: 7",
            lambda: failure(
                429,
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
                {"retry-after": "7"},
            ),
        ),
        (
            "upstream-400-prompt-too-long",
            f"HTTP 400 invalid_request_error '{LONG}'",
            lambda: failure(400, "invalid_request_error", LONG),
        ),
    ]


def stream_only_cases() -> list[tuple[str, str, callable]]:
    text = "Here is a reply long enough to be streamed in several pieces."
    return [
        (
            "upstream-stream-cut",
            "a 200 event stream closed half-way through its 6th event",
            lambda: cut(answer(text), 5),
        ),
        (
            "upstream-error-event",
            "a 200 event stream: message_start, a text block's first delta, then `event: error` overloaded_error",
            lambda: error_event(answer(text), 4),
        ),
        (
            "upstream-error-event-first",
            "a 200 event stream whose first event is `event: error` overloaded_error",
            lambda: error_event(answer(text), 0),
        ),
    ]


def raw_cases() -> list[tuple[str, str, RawReply]]:
    return [
        (
            "upstream-html-502",
            "HTTP 502 text/html (a gateway's error page)",
            RawReply(502, {"content-type": "text/html"}, HTML_502),
        ),
        ("upstream-hang-up", "closes the connection without answering", RawReply(hang_up=True)),
    ]


def request(proxy: LiteLLMProxy, model: str, stream: bool, key: str | None = None) -> tuple[httpx.Response, bytes]:
    body = {"model": model, "max_tokens": 64, "messages": [{"role": "user", "content": "Say hello."}]}
    if stream:
        body["stream"] = True
    headers = {"anthropic-version": "2023-06-01", "content-type": "application/json", "accept": "application/json"}
    if key != "":  # "" sends no key at all
        headers["x-api-key"] = key or proxy.master_key
    with httpx.Client(timeout=60) as client:
        with client.stream("POST", f"{proxy.url}/v1/messages", headers=headers, json=body) as response:
            return response, response.read()


def record(out: Path, case: str, what: str, stream: bool, response: httpx.Response, data: bytes, seen: int) -> None:
    name = f"litellm__{case}{'__stream' if stream else ''}"
    envelope = {
        "captured_from": f"litellm=={litellm_version()} proxy",
        "date": date.today().isoformat(),
        "request": {"path": "/v1/messages", "stream": stream},
        "upstream": what,
        "upstream_requests": seen,
        "status": response.status_code,
        "headers": dict(response.headers),
    }
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        (out / f"{name}.sse").write_bytes(data)
        envelope["body_file"] = f"{name}.sse"
    else:
        envelope["body"] = data.decode()
    (out / f"{name}.json").write_text(json.dumps(envelope, indent=2, ensure_ascii=False) + "\n")
    print(f"{name}: {response.status_code} {response.headers.get('content-type')} {len(data)} bytes")


def capture(out: Path, work: Path, api: FakeAnthropicAPI, raw: RawUpstream) -> None:
    keepalive = {"api_base": api.url, "keepalive_seconds": 0.5}
    with LiteLLMProxy(api.url, work, more={RAW_MODEL: raw.url, KEEPALIVE_MODEL: keepalive}) as proxy:
        print(f"litellm {litellm_version()} proxy ready in {proxy.started_in:.1f} s")

        def run(case: str, what: str, model: str, stream: bool, key: str | None = None) -> None:
            before = len(api.requests) + len(raw.requests)
            response, data = request(proxy, model, stream, key)
            seen = len(api.requests) + len(raw.requests) - before
            record(out, case, what, stream, response, data, seen)

        api.script(answer("Hello! How can I help?"), answer("Hello! How can I help?"))
        run("ok", "a normal reply", MODEL, False)
        run("ok", "a normal reply", MODEL, True)
        for case, what, make in fake_cases():
            for stream in (False, True):
                api.script(make())
                run(case, what, MODEL, stream)
        for case, what, make in stream_only_cases():
            api.script(make())
            run(case, what, MODEL, True)
        for case, what, reply in raw_cases():
            for stream in (False, True):
                raw.script(reply)
                run(case, what, RAW_MODEL, stream)
        for stream in (False, True):
            run("wrong-key", "not reached: the proxy refuses a wrong master key", MODEL, stream, key="sk-wrong")
            run("no-key", "not reached: the request carries no key", MODEL, stream, key="")
        # With keepalive_seconds the proxy sends its 200 and `: ping` lines while the upstream is silent; an
        # upstream slower than one interval fails after the status line is out.
        for case, what, make in [*fake_cases(), *stream_only_cases()[:1]]:
            reply: Reply = make()
            reply.delay = 1.5
            api.script(reply)
            run(f"keepalive__{case}", f"{what}, after 1.5 s; keepalive_seconds: 0.5", KEEPALIVE_MODEL, True)


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "fixtures" / "endpoints"
    out.mkdir(parents=True, exist_ok=True)
    api = FakeAnthropicAPI().start()
    try:
        with RawUpstream() as raw, tempfile.TemporaryDirectory() as tmp:
            capture(out, Path(tmp), api, raw)
    finally:
        api.stop()


if __name__ == "__main__":
    main()
