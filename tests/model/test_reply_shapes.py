"""Replies in the shapes real servers send, not only the shapes the API documents.

Each case is served by the loopback model byte for byte as a compatible server would send it, and run through
the real provider (and, where the transcript matters, the real agent loop): the turn goes on, what goes back to
the endpoint is what it accepts, and a reply that cannot be rebuilt is retried and then told in one line.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import FIXTURES, TEST_KEY, scripted_agent
from support.fake_api import Reply, answer, message_of, sse_bytes, sse_events, text, thinking, tool_use

from mini_agent.agent import Agent
from mini_agent.errors import ProviderError
from mini_agent.events import Notice, ReplyDiscarded, TextDelta
from mini_agent.model import AnthropicProvider, Request
from mini_agent.model.assembly import StreamAssembly
from mini_agent.model.messages import LOOKBACK_BLOCKS, with_cache_breakpoint
from mini_agent.tools.base import ToolContext, ToolRegistry, tool

looked_up: list[str] = []


@tool(risk="read", guidance="Look things up.")
def lookup(ctx: ToolContext, key: str) -> str:
    """Look up a key.

    Args:
        key: What to look up.
    """
    looked_up.append(key)
    return f"value of {key}"


@pytest.fixture(autouse=True)
def _reset():
    looked_up.clear()


def request(content: str = "hi") -> Request:
    return Request("claude-test", [{"type": "text", "text": "sys"}], [{"role": "user", "content": content}], [], 100)


def provider_for(api, settings_for, **overrides) -> AnthropicProvider:
    return AnthropicProvider(settings_for(api, **overrides), sleep=lambda s: None)


def make_agent(api, settings_for, **overrides) -> tuple[Agent, list]:
    settings = settings_for(api, **overrides)
    events: list = []
    agent = scripted_agent(settings, registry=ToolRegistry([lookup]), emit=events.append)
    return agent, events


def bent(reply: Reply, change) -> Reply:
    """The reply's real event sequence, changed by `change(events) -> events`, served byte for byte."""
    return Reply(raw_sse=sse_bytes(change(sse_events(message_of(reply)))))


def without(*names: str):
    return lambda events: [(name, data) for name, data in events if name not in names]


def usage_in(start: dict | None, delta: dict | None):
    def change(events):
        out = []
        for name, data in events:
            data = json.loads(json.dumps(data))
            if name == "message_start":
                data["message"].pop("usage", None)
                if start is not None:
                    data["message"]["usage"] = start
            if name == "message_delta":
                data.pop("usage", None)
                if delta is not None:
                    data["usage"] = delta
            out.append((name, data))
        return out

    return change


def notices(events) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice)]


# ---- usage, content and stop reasons that are missing or null ---------------------------------------------


@pytest.mark.parametrize(
    ("start", "delta", "reported"),
    [
        (None, None, False),  # no usage anywhere
        (None, {"output_tokens": 9}, False),  # only output counted: the prompt's size is unknown
        ({"input_tokens": None, "output_tokens": None}, {"output_tokens": None}, False),  # all null
        (None, {"input_tokens": 321, "output_tokens": 9}, True),  # all of it at the end
        ({"input_tokens": 321, "output_tokens": 1}, None, True),  # all of it at the start
    ],
)
def test_usage_wherever_it_is_or_is_not(api, settings_for, start, delta, reported):
    api.script(bent(answer("Counted?"), usage_in(start, delta)))
    reply = provider_for(api, settings_for).complete(request(), lambda e: None)
    assert reply.message["content"] == [text("Counted?")]
    assert reply.usage_reported is reported
    assert reply.usage.input_tokens == (321 if reported else 0)


def test_a_session_without_usage_goes_on_with_an_estimate_and_says_so_once(api, settings_for):
    api.script(
        bent(answer(tool_use("lookup", {"key": "a"})), usage_in(None, None)),
        bent(answer(tool_use("lookup", {"key": "b"})), usage_in(None, None)),
        bent(answer("Done."), usage_in(None, None)),
    )
    agent, events = make_agent(api, settings_for)
    result = agent.run_turn("look twice")
    assert result.text == "Done." and looked_up == ["a", "b"]
    assert len([n for n in notices(events) if "did not say how many tokens" in n]) == 1
    assert agent.keeper.measure(agent.session) > 0  # estimated, not anchored on a zero the server never said


def test_content_null_and_stop_reason_null_in_a_plain_reply(api, settings_for):
    bare = dict(message_of(answer("x")), content=None, stop_reason=None, usage=None)
    api.script(Reply(raw_sse=b"event: error\ndata: {}\n\n"), Reply(json_body=bare))
    reply = provider_for(api, settings_for).complete(request(), lambda e: None)
    assert reply.message == {"role": "assistant", "content": []} and reply.stop_reason == "end_turn"
    assert not reply.usage_reported
    assert "stream" not in api.message_requests[1]  # the second attempt was a plain request


def test_stop_reason_null_means_a_finished_reply(api, settings_for):
    def null_stop(events):
        return [
            (name, dict(data, delta=dict(data["delta"], stop_reason=None)) if name == "message_delta" else data)
            for name, data in events
        ]

    api.script(bent(answer("Plain."), null_stop), bent(answer(tool_use("lookup", {"key": "k"})), null_stop))
    provider = provider_for(api, settings_for)
    assert provider.complete(request(), lambda e: None).stop_reason == "end_turn"
    assert provider.complete(request(), lambda e: None).stop_reason == "tool_use"


@pytest.mark.parametrize("stop", ["end_turn", "stop", "stop_sequence"])
def test_tools_asked_for_with_another_stop_reason_are_run(api, settings_for, stop):
    api.script(answer("Looking.", tool_use("lookup", {"key": "q"}, id="t1"), stop_reason=stop), answer("Found it."))
    agent, _ = make_agent(api, settings_for)
    result = agent.run_turn("find q")
    assert looked_up == ["q"] and result.text == "Found it."
    assert api.message_requests[1]["messages"][-1]["content"][0]["tool_use_id"] == "t1"


def test_tools_in_a_reply_cut_at_the_output_limit_are_not_run_and_the_model_is_asked_again(api, settings_for):
    api.script(answer(tool_use("lookup", {"key": "q"}, id="t1"), stop_reason="max_tokens"), answer("Sent again."))
    agent, events = make_agent(api, settings_for)
    result = agent.run_turn("find q")
    assert looked_up == [] and result.text == "Sent again." and not result.is_error
    told = api.message_requests[1]["messages"][-1]["content"][0]
    assert told["tool_use_id"] == "t1" and told["is_error"]
    assert "output limit" in told["content"] and "Send the call again" in told["content"]
    assert any("output limit" in n for n in notices(events))


# ---- events out of order or missing (llama.cpp) -----------------------------------------------------------


def late_start(events):
    """message_start sent with the first token: after the first block has started and streamed."""
    start = events[0]
    rest = events[1:]
    return [rest[0], rest[1], start, *rest[2:]]


def test_a_late_message_start_loses_nothing(api, settings_for):
    api.script(bent(answer("Late starters still finish the race."), late_start))
    seen: list = []
    reply = provider_for(api, settings_for).complete(request(), seen.append)
    assert reply.message["content"] == [text("Late starters still finish the race.")]
    assert "".join(e.text for e in seen if isinstance(e, TextDelta)) == "Late starters still finish the race."


def test_a_block_whose_start_was_skipped_is_rebuilt_from_its_deltas(api, settings_for):
    api.script(bent(answer("Ünïcödé at the very start.", tool_use("lookup", {"key": "x"})), without("message_start")))
    reply = provider_for(api, settings_for).complete(request(), lambda e: None)
    blocks = reply.message["content"]
    assert blocks[0] == text("Ünïcödé at the very start.") and blocks[1]["input"] == {"key": "x"}

    def skip_first_block_start(events):
        return [e for e in events if not (e[0] == "content_block_start" and e[1]["index"] == 0)]

    api.script(bent(answer("No start event for me."), skip_first_block_start))
    assert provider_for(api, settings_for).complete(request(), lambda e: None).message["content"] == [
        text("No start event for me.")
    ]


def test_lone_surrogates_become_replacement_characters(api, settings_for):
    raw = sse_bytes(sse_events(message_of(answer("ok"))))
    api.script(Reply(raw_sse=raw.replace(b'"text": "ok"', b'"text": "o\\ud800k"')))
    reply = provider_for(api, settings_for).complete(request(), lambda e: None)
    assert reply.message["content"] == [text("o\ufffdk")]
    json.dumps(reply.message).encode("utf-8")  # storable and sendable


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"event: message_start\ndata: {not json\n\n", "malformed reply"),
        (b"event: ping\ndata: {}\n\n", "empty reply stream"),  # events, but none of a reply
        (b"", "empty reply stream"),
        (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":"x","delta":{}}\n\n', "malformed"),
    ],
)
def test_streams_nothing_can_be_made_of_are_retried_then_told_in_one_line(api, settings_for, raw, said):
    api.script(*[Reply(raw_sse=raw) for _ in range(3)])
    events: list = []
    with pytest.raises(ProviderError, match=said) as caught:
        provider_for(api, settings_for).complete(request(), events.append)
    message = str(caught.value)
    assert api.url in message and "\n" not in message and "3 attempts" in message
    assert len([e for e in events if isinstance(e, ReplyDiscarded)]) == 2


# ---- JSON where events were due ---------------------------------------------------------------------------


def test_a_whole_message_as_json_to_a_streaming_request_is_taken(api, settings_for):
    api.script(Reply(json_body=message_of(answer("Sent whole."))))
    seen: list = []
    reply = provider_for(api, settings_for).complete(request(), seen.append)
    assert reply.message["content"] == [text("Sent whole.")] and len(api.message_requests) == 1
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["Sent whole."]


@pytest.mark.parametrize(
    ("body", "said", "retried"),
    [
        ({"error": {"message": "litellm.BadRequestError: model 'x' is not in the router", "type": None}}, "router", 0),
        ({"error": {"message": "upstream overloaded", "code": 529}}, "upstream overloaded", 2),
        ({"error": "plain words of failure"}, "plain words of failure", 0),
        ({"detail": "what is this"}, "not a message", 2),
    ],
)
def test_an_error_body_with_status_200_is_told_in_the_endpoints_words(api, settings_for, body, said, retried):
    api.script(*[Reply(json_body=body) for _ in range(retried + 1)])
    with pytest.raises(ProviderError, match=said) as caught:
        provider_for(api, settings_for).complete(request(), lambda e: None)
    assert "TypeError" not in str(caught.value) and "Unexpected" not in str(caught.value)
    assert len(api.message_requests) == retried + 1


# ---- what goes back to the endpoint -----------------------------------------------------------------------


def test_cache_breakpoint_never_lands_on_thinking_or_blank_blocks():
    messages = [
        {"role": "user", "content": [text("do it")]},
        {"role": "assistant", "content": [text("plan"), thinking("ponder", "sig")]},
    ]
    marked = with_cache_breakpoint(messages)
    assert marked[-1]["content"][0]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in marked[-1]["content"][1]
    assert "cache_control" not in messages[-1]["content"][0]  # the transcript itself is untouched


def test_a_wide_step_keeps_the_previous_breakpoint_within_the_lookback():
    calls = [tool_use("lookup", {"key": str(i)}, id=f"t{i}") for i in range(LOOKBACK_BLOCKS)]
    results = [{"type": "tool_result", "tool_use_id": c["id"], "content": "v"} for c in calls]
    messages = [
        {"role": "user", "content": [text("look everything up")]},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": results},
    ]
    marked = with_cache_breakpoint(messages)
    positions = [
        (m, b)
        for m, message in enumerate(marked)
        for b, block in enumerate(message["content"])
        if "cache_control" in block
    ]
    assert positions == [(0, 0), (2, LOOKBACK_BLOCKS - 1)]
    narrow = with_cache_breakpoint(
        [messages[0], {**messages[1], "content": calls[:3]}, {**messages[2], "content": results[:3]}]
    )
    assert sum("cache_control" in b for m in narrow for b in m["content"]) == 1


# ---- the assembler's invariant ----------------------------------------------------------------------------

blocks_strategy = st.lists(
    st.one_of(
        st.builds(text, st.text(min_size=1, max_size=40).filter(str.strip)),
        st.builds(lambda k: tool_use("lookup", {"key": k}), st.text(max_size=20)),
        st.builds(thinking, st.text(min_size=1, max_size=30), st.text(min_size=1, max_size=10)),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(blocks=blocks_strategy, drop_start=st.booleans(), late=st.booleans(), skipped=st.sets(st.integers(0, 4)))
def test_assembly_rebuilds_what_late_or_skipped_starts_leave_out(blocks, drop_start, late, skipped):
    message = message_of(answer(*blocks, usage={"input_tokens": 5, "output_tokens": 6}))
    events = [data for _, data in sse_events(message)]
    start, rest = events[0], events[1:]
    # Starts of text and thinking blocks may go missing (a tool's start names the tool: it is always there).
    rest = [
        e
        for e in rest
        if not (
            e["type"] == "content_block_start"
            and e["index"] in skipped
            and e["content_block"]["type"] in ("text", "thinking")
        )
    ]
    if not drop_start:
        rest.insert(min(2, len(rest)) if late else 0, start)
    assembly = StreamAssembly()
    for event in rest:
        assembly.add(json.loads(json.dumps(event)))
    rebuilt, usage = assembly.message()
    expected = [dict(b, text=b["text"]) if b["type"] == "text" else b for b in blocks]
    assert rebuilt["content"] == expected
    assert rebuilt["stop_reason"] == message["stop_reason"]
    assert usage["output_tokens"] == 6 and (usage.get("input_tokens") == 5) is (not drop_start)


def test_the_key_never_reaches_an_error_line(api, settings_for):
    api.script(Reply(json_body={"error": {"message": f"bad key {TEST_KEY}"}}))
    with pytest.raises(ProviderError) as caught:
        provider_for(api, settings_for).complete(request(), lambda e: None)
    assert TEST_KEY not in str(caught.value)


# ---- recorded streams of each family (tests/fixtures/endpoints/README.md says where each came from) -------

ENDPOINTS = FIXTURES / "endpoints"


@pytest.mark.parametrize(
    ("fixture", "block_types", "stop_reason"),
    [
        ("llamacpp__captured_stream_text.sse", ["text"], "max_tokens"),
        ("llamacpp__captured_stream_no_message_start.sse", ["text"], "max_tokens"),
        ("llamacpp__stream_text.sse", ["text"], "end_turn"),
        ("llamacpp__stream_tool_use.sse", ["text", "tool_use"], "tool_use"),
        ("llamacpp__stream_thinking.sse", ["text"], "end_turn"),  # unsigned thinking is not kept
        ("llamacpp__stream_no_message_start.sse", ["text"], "end_turn"),
        ("llamacpp__stream_late_start.sse", ["text"], "end_turn"),
        ("ollama__stream_text.sse", ["text"], "end_turn"),
        ("ollama__stream_tool_use.sse", ["text", "tool_use"], "tool_use"),
        ("vllm__stream_text.sse", ["text"], "end_turn"),
        ("vllm__stream_tool_use.sse", ["text", "tool_use"], "tool_use"),
    ],
)
def test_recorded_streams_of_each_family_make_whole_replies(api, settings_for, fixture, block_types, stop_reason):
    raw = (ENDPOINTS / fixture).read_bytes()
    api.script(Reply(raw_sse=raw))
    seen: list = []
    reply = provider_for(api, settings_for).complete(request(), seen.append)
    assert [b["type"] for b in reply.message["content"]] == block_types
    assert reply.stop_reason == stop_reason
    assert not [e for e in seen if isinstance(e, ReplyDiscarded)]
    streamed = "".join(e.text for e in seen if isinstance(e, TextDelta))
    assert streamed == "".join(b["text"] for b in reply.message["content"] if b["type"] == "text")
    for block in reply.message["content"]:
        if block["type"] == "tool_use":
            assert isinstance(block["input"], dict) and block["id"] and block["name"]
    json.dumps(reply.message).encode("utf-8")  # fit to store and to send back


PLAIN_REPLIES = ["llamacpp__message.json", "llamacpp__captured_message.json", "ollama__message.json"]


@pytest.mark.parametrize("fixture", PLAIN_REPLIES)
def test_recorded_plain_replies_of_each_family(api, settings_for, fixture):
    body = json.loads((ENDPOINTS / fixture).read_text(encoding="utf-8"))
    api.script(Reply(raw_sse=b"event: error\ndata: {}\n\n"), Reply(json_body=body))
    reply = provider_for(api, settings_for).complete(request(), lambda e: None)
    assert reply.message["content"] and reply.stop_reason in ("end_turn", "max_tokens", "tool_use")
    assert reply.usage_reported


# ---- connections ------------------------------------------------------------------------------------------


def test_a_connection_the_server_closed_is_replaced_at_once_and_unannounced(api, settings_for):
    api.script(Reply(hang_up=True), answer("Fresh connection."))
    delays: list[float] = []
    seen: list = []
    provider = AnthropicProvider(settings_for(api), sleep=delays.append)
    assert provider.complete(request(), seen.append).message["content"] == [text("Fresh connection.")]
    assert delays == [] and not [e for e in seen if isinstance(e, ReplyDiscarded)]
    # Twice in a row is no longer a stale connection: it is retried, said and waited for like any other.
    api.script(Reply(hang_up=True), Reply(hang_up=True), answer("Third time."))
    assert provider.complete(request(), seen.append).message["content"] == [text("Third time.")]
    assert len(delays) == 1 and len([e for e in seen if isinstance(e, ReplyDiscarded)]) == 1


def test_a_failure_inside_an_overflow_retry_names_its_own_cause(settings_for):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    down = type("Down", (), {"url": f"http://127.0.0.1:{port}"})()
    provider = AnthropicProvider(settings_for(down, max_retries=0), sleep=lambda s: None)
    try:
        raise ValueError("prompt is too long: the error being handled")
    except ValueError:
        with pytest.raises(ProviderError) as caught:
            provider.complete(request(), lambda e: None)
    assert "connection refused" in str(caught.value) and "too long" not in str(caught.value)


def test_one_attempt_is_one_attempt_and_every_retry_line_has_its_full_stop(api, settings_for):
    api.script(Reply(json_body={"error": {"message": "upstream overloaded", "code": 529}}))
    with pytest.raises(ProviderError) as caught:
        provider_for(api, settings_for, max_retries=0).complete(request(), lambda e: None)
    assert str(caught.value).endswith("(gave up after 1 attempt)")
    assert ReplyDiscarded("no stop here", 1, 2.0).retrying() == "no stop here. Retrying in 2.0s"
    assert ReplyDiscarded("Cut off mid-way.", 1, 0.5).retrying() == "Cut off mid-way. Retrying in 0.5s"
