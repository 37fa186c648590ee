"""The provider against the loopback Messages API: streaming, fixtures, retries, faults, clear messages."""

from __future__ import annotations

import json
import socket

import pytest
from support import FIXTURES, TEST_KEY
from support.fake_api import answer, cut, failure, replay, thinking, tool_use

from mini_agent.errors import ProviderError
from mini_agent.events import ReplyDiscarded, TextDelta
from mini_agent.model import AnthropicProvider, Request

SSE = FIXTURES / "sse"


def request(text: str = "hi") -> Request:
    return Request("claude-test", [{"type": "text", "text": "sys"}], [{"role": "user", "content": text}], [], 100)


def provider_for(api, settings_for, **overrides):
    delays: list[float] = []
    provider = AnthropicProvider(settings_for(api, **overrides), sleep=delays.append)
    return provider, delays


def test_streams_text_deltas_and_returns_the_whole_reply(api, settings_for):
    api.script(answer("Hello there, streaming world!", usage={"input_tokens": 12, "output_tokens": 7}))
    provider, _ = provider_for(api, settings_for)
    events = []
    reply = provider.complete(request(), events.append)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there, streaming world!"
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1
    assert reply.message == {
        "role": "assistant",
        "content": [{"type": "text", "text": "Hello there, streaming world!"}],
    }
    assert reply.stop_reason == "end_turn"
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (12, 7)
    assert api.message_requests[0]["stream"] is True


def test_tool_use_input_arrives_whole_from_partial_json(api, settings_for):
    api.script(answer("Let me look.", tool_use("read_file", {"path": "src/app.py", "limit": 20}, id="toolu_1")))
    provider, _ = provider_for(api, settings_for)
    reply = provider.complete(request(), lambda e: None)
    assert reply.stop_reason == "tool_use"
    assert reply.message["content"][1] == {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "read_file",
        "input": {"path": "src/app.py", "limit": 20},
    }


def test_thinking_blocks_keep_their_signature(api, settings_for):
    api.script(answer(thinking("Consider the file first.", "sig-XYZ"), "Done."))
    provider, _ = provider_for(api, settings_for)
    reply = provider.complete(request(), lambda e: None)
    assert reply.message["content"][0] == {
        "type": "thinking",
        "thinking": "Consider the file first.",
        "signature": "sig-XYZ",
    }


@pytest.mark.parametrize(
    ("fixture", "stop_reason", "block_types"),
    [
        ("basic_response", "end_turn", ["text"]),
        ("tool_use_response", "tool_use", ["text", "tool_use"]),
        ("incomplete_partial_json_response", "max_tokens", ["text", "tool_use"]),
        ("refusal_response", "refusal", []),
        ("compaction_response", "end_turn", ["compaction", "text"]),
        ("fallback_response", "end_turn", ["fallback", "text"]),
        ("fable-fallback__stream-a-refusal", "refusal", ["thinking", "text"]),
        ("fable-fallback__stream-a-toolrefusal", "refusal", ["server_tool_use", "web_search_tool_result", "text"]),
        ("fable-fallback__stream-b-fallback", "end_turn", ["text"]),
    ],
)
def test_recorded_sdk_streams_replay(api, settings_for, fixture, stop_reason, block_types):
    path = SSE / f"anthropic-sdk-python__{fixture}.sse"  # in the repository: a missing one is a failure
    api.script(replay(path))
    provider, _ = provider_for(api, settings_for)
    reply = provider.complete(request(), lambda e: None)
    assert reply.stop_reason == stop_reason
    assert [block["type"] for block in reply.message["content"]] == block_types


def _raw_blocks(path) -> dict[int, dict]:
    """Block starts as the server sent them, keyed by index (read from the file, to compare with)."""
    blocks = {}
    for line in path.read_text().splitlines():
        if line.startswith("data:") and '"content_block_start"' in line:
            event = json.loads(line[5:])
            blocks[event["index"]] = event["content_block"]
    return blocks


def test_blocks_the_agent_does_not_act_on_are_kept_exactly(api, settings_for):
    path = SSE / "anthropic-sdk-python__fable-fallback__stream-a-toolrefusal.sse"
    api.script(replay(path))
    provider, _ = provider_for(api, settings_for)
    reply = provider.complete(request(), lambda e: None)
    sent = _raw_blocks(path)
    assert reply.message["content"][1] == sent[1]  # web_search_tool_result, byte for byte as JSON
    assert reply.message["content"][0] == dict(sent[0], input={"query": "solar eclipse viewing safety news 2026"})


def test_block_types_unknown_to_the_sdk_keep_their_streamed_content(api, settings_for):
    api.script(replay(SSE / "anthropic-sdk-python__compaction_response.sse"))
    provider, _ = provider_for(api, settings_for)
    reply = provider.complete(request(), lambda e: None)
    assert reply.message["content"][0] == {
        "type": "compaction",
        "content": "Earlier conversation summarized.",
        "encrypted_content": "EpwBCioIDxgCEAEYASJALd_opaque_compaction_payload",
    }


def test_an_error_event_mid_stream_falls_back_to_a_plain_request(api, settings_for):
    api.script(replay(SSE / "anthropic-sdk-python__test_streaming__test_error_type.sse"), answer("Recovered."))
    provider, delays = provider_for(api, settings_for)
    events = []
    reply = provider.complete(request(), events.append)
    assert reply.message["content"] == [{"type": "text", "text": "Recovered."}]
    first, second = api.message_requests
    assert first["stream"] is True and "stream" not in second
    assert {k: v for k, v in first.items() if k != "stream"} == second
    assert [type(e) for e in events].count(ReplyDiscarded) == 1


def test_429_honours_retry_after(api, settings_for):
    api.script(failure(429, "rate_limit_error", "Too many requests", {"retry-after": "7"}), answer("ok"))
    provider, delays = provider_for(api, settings_for)
    assert provider.complete(request(), lambda e: None).message["content"][0]["text"] == "ok"
    assert delays == [7.0]
    assert api.message_requests[0] == api.message_requests[1]


@pytest.mark.parametrize(("status", "kind"), [(529, "overloaded_error"), (500, "api_error"), (503, "api_error")])
def test_server_errors_are_retried_with_growing_jittered_backoff(api, settings_for, status, kind):
    api.script(failure(status, kind, "busy"), failure(status, kind, "busy"), answer("finally"))
    provider, delays = provider_for(api, settings_for, retry_base_delay=1.0, max_retries=3)
    assert provider.complete(request(), lambda e: None).message["content"][0]["text"] == "finally"
    assert len(delays) == 2
    assert 0.5 <= delays[0] <= 1.0 and 1.0 <= delays[1] <= 2.0
    assert api.message_requests[0] == api.message_requests[2]


def test_a_stream_cut_mid_way_is_discarded_and_retried_on_the_same_body(api, settings_for):
    api.script(cut(answer("This first attempt will be cut in half"), after_events=5), answer("Second attempt, whole."))
    provider, _ = provider_for(api, settings_for)
    events = []
    reply = provider.complete(request(), events.append)
    assert reply.message["content"] == [{"type": "text", "text": "Second attempt, whole."}]
    discarded = [e for e in events if isinstance(e, ReplyDiscarded)]
    assert len(discarded) == 1 and "cut off" in discarded[0].reason
    assert api.message_requests[0] == api.message_requests[1]


def test_a_stream_that_stalls_mid_way_is_abandoned_after_the_idle_timeout_and_retried(api, settings_for):
    from support.fake_api import Reply

    stalled = answer("This attempt stalls after a few events")
    api.script(Reply(content=stalled.content, stall_after_events=3), answer("Second attempt, whole."))
    # The whole-request timeout stays long: only the idle time between two events may cut the attempt short.
    provider, _ = provider_for(api, settings_for, request_timeout=600.0, stream_idle_timeout=0.5)
    events = []
    reply = provider.complete(request(), events.append)
    assert reply.message["content"] == [{"type": "text", "text": "Second attempt, whole."}]
    (discarded,) = [e for e in events if isinstance(e, ReplyDiscarded)]
    assert "stalled" in discarded.reason and "stream_idle_timeout" in discarded.reason


def test_retries_are_bounded_and_the_message_names_the_endpoint(api, settings_for):
    api.script(*[failure(529, "overloaded_error", "Overloaded") for _ in range(3)])
    provider, delays = provider_for(api, settings_for, max_retries=2)
    with pytest.raises(ProviderError) as caught:
        provider.complete(request(), lambda e: None)
    message = str(caught.value)
    assert api.url in message and "overloaded" in message and "3 attempts" in message
    assert TEST_KEY not in message
    assert len(delays) == 2


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (401, "authentication_error", "rejected the API key"),
        (403, "permission_error", "refused access"),
        (404, "not_found_error", "does not know model 'claude-test'"),
        (400, "invalid_request_error", "rejected the request"),
    ],
)
def test_client_errors_fail_at_once_with_a_clear_line(api, settings_for, status, kind, expected):
    api.script(failure(status, kind, f"detail for {status} with key {TEST_KEY}"))
    provider, delays = provider_for(api, settings_for)
    with pytest.raises(ProviderError) as caught:
        provider.complete(request(), lambda e: None)
    message = str(caught.value)
    assert expected in message and "\n" not in message
    assert TEST_KEY not in message
    assert delays == [] and len(api.message_requests) == 1


def test_connection_refused_says_so(settings_for, api):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    api_down = type("Down", (), {"url": f"http://127.0.0.1:{port}"})()
    provider, delays = provider_for(api_down, settings_for, max_retries=1)
    with pytest.raises(ProviderError) as caught:
        provider.complete(request(), lambda e: None)
    assert "connection refused" in str(caught.value) and str(port) in str(caught.value)
    assert len(delays) == 1


def test_a_hung_endpoint_times_out(api, settings_for):
    slow = answer("too late")
    slow.delay = 3
    api.script(slow)
    provider, _ = provider_for(api, settings_for, stream_idle_timeout=0.5, max_retries=0)
    with pytest.raises(ProviderError, match="sent nothing for too long .*stream_idle_timeout"):
        provider.complete(request(), lambda e: None)


def test_context_window_comes_from_the_models_endpoint(api, settings_for):
    api.model_info = {
        "id": "claude-test",
        "type": "model",
        "display_name": "Test",
        "created_at": "2025-01-01T00:00:00Z",
        "max_input_tokens": 123_456,
        "max_tokens": 8192,
    }
    provider, _ = provider_for(api, settings_for)
    provider.warm_up()
    assert provider.context_window(wait=5) == 123_456
    assert any(r.path.startswith("/v1/models/claude-test") for r in api.requests)


def test_context_window_is_unknown_when_the_endpoint_has_none(api, settings_for):
    provider, _ = provider_for(api, settings_for)
    provider.warm_up()
    assert provider.context_window(wait=5) is None


def test_the_key_is_sent_as_a_header_and_nowhere_in_the_body(api, settings_for):
    api.script(answer("ok"))
    provider, _ = provider_for(api, settings_for)
    provider.complete(request(), lambda e: None)
    recorded = api.requests[-1]
    # The pinned SDK major (2.x) sends the key as a bearer token; 1.x sent `x-api-key`. README says which.
    assert recorded.headers.get("Authorization") == f"Bearer {TEST_KEY}"
    assert "X-Api-Key" not in recorded.headers and recorded.headers.get("anthropic-version")
    assert TEST_KEY not in json.dumps(recorded.body)


@pytest.mark.parametrize(
    "raw",
    [
        b"event: message_start\ndata: {not json\n\n",
        b"event: content_block_delta\n"  # tool input for a block that never said which tool: nothing to rebuild
        b'data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{}"}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    ],
)
def test_a_malformed_reply_is_retried_then_reported_in_one_line(api, settings_for, raw):
    from support.fake_api import Reply

    api.script(Reply(raw_sse=raw), answer("Sound reply."))
    provider, _ = provider_for(api, settings_for)
    assert provider.complete(request(), lambda e: None).message["content"][0]["text"] == "Sound reply."
    api.script(Reply(raw_sse=raw), Reply(raw_sse=raw), Reply(raw_sse=raw))
    with pytest.raises(ProviderError, match="malformed reply") as caught:
        provider.complete(request(), lambda e: None)
    assert "\n" not in str(caught.value)


def test_the_sdk_is_imported_without_its_aiohttp_transport_and_http2():
    """Where aiohttp and h2 are installed (the test extras bring them) the SDK imports its aiohttp transport and
    its HTTP stack imports h2 with the first client, ~0.3 s of a cold start together; the agent uses the
    synchronous client over HTTP/1.1 and leaves both out. (One fresh interpreter: each costs an SDK import.)"""
    import subprocess
    import sys

    # Asked of the fresh interpreter, not of this one: an in-process test's import_sdk() has already marked both
    # as refused in this process's sys.modules, where find_spec then finds nothing.
    probe = (
        "import importlib.util, sys; installed = [importlib.util.find_spec(m) is not None for m in ('aiohttp', 'h2')]; "
        "from mini_agent.model.sdk import import_sdk; import_sdk().Anthropic; import httpx2; httpx2.Client(); "
        "print(*installed, *(sys.modules.get(m) is not None for m in ('aiohttp', 'h2')))"
    )
    ours = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    installed, loaded = ours.stdout.split()[:2], ours.stdout.split()[2:]
    if installed != ["True", "True"]:
        pytest.skip("aiohttp or h2 is not installed here: nothing to leave out")
    assert loaded == ["False", "False"], ours.stderr


def test_making_a_provider_loads_no_request_path_and_its_warm_up_loads_all_of_it(tmp_path):
    """The REPL makes its provider before its first prompt, and warms it up behind that prompt: the modules a
    request needs besides the SDK (reading a reply, the retry policy, the thinking plan, the events) load in the
    warm-up, neither before the prompt nor after Enter. (A fresh interpreter, whose SDK import is made to fail:
    the warm-up goes on to the rest as it does when the SDK's import fails for real.)"""
    import subprocess
    import sys

    probe = f"""
import sys
from pathlib import Path
from mini_agent.model import client
from mini_agent.settings import Settings
REQUEST_PATH = ("mini_agent.model.reading", "mini_agent.model.faults", "mini_agent.model.thinking",
                "mini_agent.model.wellformed", "mini_agent.model.replies", "mini_agent.events")
def no_sdk():
    raise ImportError("no SDK in this probe")
client.import_sdk = no_sdk
settings = Settings(base_url="http://127.0.0.1:9", api_key="k", model="m", cwd=Path({str(tmp_path)!r}))
provider = client.AnthropicProvider(settings)
print(*(name in sys.modules for name in REQUEST_PATH))
provider._import_sdk()
print(*(name in sys.modules for name in REQUEST_PATH))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path)
    made, warmed = done.stdout.splitlines()
    assert made.split() == ["False"] * 6, done.stderr
    assert warmed.split() == ["True"] * 6, done.stderr


def test_threads_asking_for_the_thinking_state_first_share_one(api, settings_for, monkeypatch):
    """Made on first use (not at start-up); sub-agents' threads may be first together, and a refusal the endpoint
    made must be seen by every request after it: one Thinking, never two."""
    import threading
    import time

    from mini_agent.model import thinking

    made = []

    class Slow(thinking.Thinking):
        def __init__(self) -> None:
            made.append(self)
            time.sleep(0.05)  # widens the window two unguarded threads would both enter
            super().__init__()

    monkeypatch.setattr(thinking, "Thinking", Slow)
    provider, _ = provider_for(api, settings_for)
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(provider.thinking)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 1 and all(state is made[0] for state in seen)
