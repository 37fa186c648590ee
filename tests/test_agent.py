"""The loop, in process, against the loopback model, with small real tools."""

from __future__ import annotations

import itertools
import json
import threading

import pytest
from support import PATIENCE, scripted_agent
from support.fake_api import answer, thinking, tool_use

from mini_agent.errors import StepLimitReached, TurnAborted
from mini_agent.events import HintChanged, Notice
from mini_agent.gate import ApprovalRequest
from mini_agent.safety.permissions import Allow, Deny
from mini_agent.tools.base import NetworkError, ToolContext, ToolRegistry, tool

calls: list[tuple[str, object]] = []
barrier = threading.Barrier(2, timeout=PATIENCE)


@tool(risk="read", guidance="Look things up.")
def lookup(ctx: ToolContext, key: str) -> str:
    """Look up a key.

    Args:
        key: What to look up.
    """
    calls.append(("lookup", key))
    return f"value of {key}"


@tool(risk="read", guidance="Meet another call.")
def rendezvous(ctx: ToolContext, name: str) -> str:
    """Wait until a second call is running too.

    Args:
        name: Who arrives.
    """
    barrier.wait()
    return f"{name} met"


@tool(risk="write", guidance="Store things.")
def store(ctx: ToolContext, key: str, value: str) -> str:
    """Store a value.

    Args:
        key: Where.
        value: What.
    """
    calls.append(("store", (key, value, ctx.request)))
    return "stored"


@tool(risk="network", guidance="Reach out.")
def reach(ctx: ToolContext, host: str) -> str:
    """Reach a host.

    Args:
        host: Which host.
    """
    if host == "down":
        raise NetworkError(f"cannot reach {host}")
    return "reached"


@tool(risk="exec", guidance="Be interrupted.")
def interrupt(ctx: ToolContext, why: str) -> str:
    """Stand for a command the user interrupts.

    Args:
        why: Any text.
    """
    raise KeyboardInterrupt


@pytest.fixture(autouse=True)
def _reset():
    calls.clear()
    barrier.reset()


def make_agent(api, settings_for, confirm=lambda request: Allow(), **overrides):
    settings = settings_for(api, **overrides)
    events: list = []
    registry = ToolRegistry([lookup, rendezvous, store, reach, interrupt])
    agent = scripted_agent(settings, registry=registry, emit=events.append, confirm=confirm)
    return agent, events


def results_of(request_body: dict) -> list[dict]:
    return request_body["messages"][-1]["content"]


def test_a_plain_answer_ends_the_turn(api, settings_for):
    api.script(answer("Hi there."))
    agent, _ = make_agent(api, settings_for)
    result = agent.run_turn("hello")
    assert (result.text, result.stop_reason, result.steps, result.is_error) == ("Hi there.", "end_turn", 1, False)
    assert agent.session.messages == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Hi there."}]},
    ]


def test_every_call_of_a_reply_runs_and_results_return_in_order_in_one_message(api, settings_for):
    api.script(
        answer(
            "Working.",
            tool_use("lookup", {"key": "a"}, id="t1"),
            tool_use("store", {"key": "b", "value": "v"}, id="t2"),
            tool_use("lookup", {"key": "c"}, id="t3"),
        ),
        answer("All done."),
    )
    agent, _ = make_agent(api, settings_for)
    assert agent.run_turn("do three things").text == "All done."
    blocks = results_of(api.message_requests[1])
    assert [b["tool_use_id"] for b in blocks] == ["t1", "t2", "t3"]
    assert [b["content"] for b in blocks] == ["value of a", "stored", "value of c"]
    assert all("is_error" not in b for b in blocks)


def test_independent_read_only_calls_run_concurrently(api, settings_for):
    api.script(
        answer(tool_use("rendezvous", {"name": "x"}, id="r1"), tool_use("rendezvous", {"name": "y"}, id="r2")),
        answer("Met."),
    )
    agent, _ = make_agent(api, settings_for)
    agent.run_turn("meet")
    assert [b["content"] for b in results_of(api.message_requests[1])] == ["x met", "y met"]


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (tool_use("nonexistent", {}, id="bad"), "Unknown tool 'nonexistent'"),
        (tool_use("lookup", {"wrong": 1}, id="bad"), "missing required parameter 'key'"),
        (tool_use("lookup", {"key": "a", "extra": 2}, id="bad"), "unknown parameter 'extra'"),
        (tool_use("store", {"key": ["not", "a", "string"], "value": "v"}, id="bad"), "'key'"),
    ],
)
def test_a_malformed_call_becomes_an_error_result_and_the_run_goes_on(api, settings_for, call, expected):
    api.script(answer(call), answer("Understood."))
    agent, _ = make_agent(api, settings_for)
    assert agent.run_turn("go").text == "Understood."
    (block,) = results_of(api.message_requests[1])
    assert block["is_error"] is True and expected in block["content"]
    assert calls == []


def test_the_step_limit_stops_with_a_valid_transcript(api, settings_for):
    api.script(*[answer(tool_use("lookup", {"key": str(i)})) for i in range(3)])
    agent, _ = make_agent(api, settings_for, max_steps=3)
    with pytest.raises(StepLimitReached, match="3 steps"):
        agent.run_turn("loop forever")
    assert agent.session.messages[-1]["content"][0]["type"] == "tool_result"
    assert len(api.message_requests) == 3


def test_a_refusal_ends_the_turn_with_a_notice(api, settings_for):
    api.script(answer("I can't help", stop_reason="refusal"))
    agent, events = make_agent(api, settings_for)
    result = agent.run_turn("something bad")
    assert result.is_error and result.stop_reason == "refusal"
    assert any(isinstance(e, Notice) and "declined" in e.text for e in events)


def test_calls_cut_at_max_tokens_run_no_tool_and_twice_in_a_row_end_the_turn(api, settings_for):
    api.script(
        answer("Writing", tool_use("store", {"key": "k", "value": "partial"}, id="cut1"), stop_reason="max_tokens"),
        answer("Again", tool_use("store", {"key": "k", "value": "partial"}, id="cut2"), stop_reason="max_tokens"),
        answer("Next turn answer."),
    )
    agent, events = make_agent(api, settings_for)
    result = agent.run_turn("write a lot")
    assert result.is_error and result.stop_reason == "max_tokens" and calls == []
    assert "output limit" in result.error and "2 times in a row" in result.error
    assert any(isinstance(e, Notice) and "output limit" in e.text for e in events)
    assert agent.session.messages[-1]["content"][0]["tool_use_id"] == "cut2"
    agent.run_turn("continue")
    sent = api.message_requests[2]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user", "assistant", "user"]
    assert [b["type"] for b in sent[-1]["content"]] == ["tool_result", "text"]


def test_blocks_not_acted_on_go_back_unchanged_to_anthropic(api, settings_for):
    odd = {"type": "future_block", "payload": {"x": [1, 2]}, "note": "kept"}
    api.other_blocks = True  # a block type the API added after these rules were written
    api.script(
        answer(thinking("Plan the lookup.", "sig-1"), odd, tool_use("lookup", {"key": "k"}, id="t1")), answer("Done.")
    )
    agent, _ = make_agent(api, settings_for, provider="anthropic")  # the family, whatever the URL
    agent.run_turn("look")
    assistant = api.message_requests[1]["messages"][1]
    assert assistant["content"][0] == {"type": "thinking", "thinking": "Plan the lookup.", "signature": "sig-1"}
    assert assistant["content"][1] == odd


def test_block_types_a_compatible_server_made_up_are_left_out_once_said(api, settings_for):
    odd = {"type": "future_block", "payload": {"x": [1, 2]}}
    unsigned = {"type": "thinking", "thinking": "Local models sign nothing.", "signature": ""}
    blank = {"type": "text", "text": " \n "}
    api.script(
        answer(unsigned, odd, blank, tool_use("lookup", {"key": "k"}, id="t1")),
        answer(odd, "Done."),
    )
    agent, events = make_agent(api, settings_for)
    result = agent.run_turn("look")
    assert result.text == "Done."
    assistant = api.message_requests[1]["messages"][1]
    # What the endpoint would reject back never goes back: its own block type, unsigned thinking, blank text.
    assert [b["type"] for b in assistant["content"]] == ["tool_use"]
    notices = [e.text for e in events if isinstance(e, Notice) and "future_block" in e.text]
    assert len(notices) == 1 and "left out" in notices[0]


def test_requests_are_cache_friendly(api, settings_for):
    api.script(
        answer(tool_use("lookup", {"key": "a"})),
        answer(tool_use("store", {"key": "b", "value": "c"})),
        answer("Done."),
        answer("Second turn."),
    )
    agent, _ = make_agent(api, settings_for)
    agent.run_turn("first")
    agent.run_turn("second")
    bodies = api.message_requests
    encoded = [(json.dumps(b["system"]), json.dumps(b["tools"])) for b in bodies]
    assert len(set(encoded)) == 1
    system = bodies[0]["system"]
    assert [("cache_control" in block) for block in system] == [False, True]
    for previous, current in itertools.pairwise(bodies):
        before, after = strip_breakpoints(previous["messages"]), strip_breakpoints(current["messages"])
        assert after[: len(before)] == before
    for body in bodies:
        marked = [
            (i, j) for i, m in enumerate(body["messages"]) for j, b in enumerate(m["content"]) if "cache_control" in b
        ]
        assert marked == [(len(body["messages"]) - 1, len(body["messages"][-1]["content"]) - 1)]
    assert all("cache_control" not in b for m in agent.session.messages for b in m["content"])


def strip_breakpoints(messages: list[dict]) -> list[dict]:
    return [
        dict(m, content=[{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]]) for m in messages
    ]


def test_a_declined_call_tells_the_model_and_the_run_goes_on(api, settings_for):
    asked: list[ApprovalRequest] = []

    def confirm(request):
        asked.append(request)
        return Deny("The user declined to run store.")

    api.script(answer(tool_use("store", {"key": "k", "value": "v"})), answer("OK, not storing."))
    agent, _ = make_agent(api, settings_for, confirm=confirm)
    assert agent.run_turn("store it").text == "OK, not storing."
    assert asked[0].tool.name == "store" and asked[0].reason == "changes a file"
    (block,) = results_of(api.message_requests[1])
    assert block["is_error"] and "declined" in block["content"] and calls == []


def test_plan_mode_refuses_changes_without_asking(api, settings_for):
    api.script(answer(tool_use("lookup", {"key": "a"}), tool_use("store", {"key": "k", "value": "v"})), answer("Plan."))
    agent, _ = make_agent(
        api, settings_for, confirm=lambda r: pytest.fail("plan mode must not ask"), permission_mode="plan"
    )
    agent.run_turn("plan it")
    ok, refused = results_of(api.message_requests[1])
    assert ok["content"] == "value of a"
    assert refused["is_error"] and "Plan mode is read-only" in refused["content"]


def test_three_network_failures_mark_a_tool_degraded_until_it_recovers(api, settings_for):
    api.script(
        answer(tool_use("reach", {"host": "down"})),
        answer(tool_use("reach", {"host": "down"})),
        answer(tool_use("reach", {"host": "down"})),
        answer(tool_use("reach", {"host": "up"})),
        answer("Back."),
    )
    agent, events = make_agent(api, settings_for, permission_mode="auto")
    agent.run_turn("reach out")
    systems = [b["system"] for b in api.message_requests]
    assert all(len(s) == 2 for s in systems[:3])
    assert len(systems[3]) == 3
    assert '<system_hint type="tool_degraded" tool="reach">' in systems[3][2]["text"]
    assert systems[3][:2] == systems[0][:2]
    assert len(systems[4]) == 2
    assert [e.text is None for e in events if isinstance(e, HintChanged)] == [False, True]


def test_ctrl_c_during_a_tool_aborts_the_turn_and_keeps_the_transcript_valid(api, settings_for):
    api.script(
        answer(tool_use("lookup", {"key": "a"}, id="done1"), tool_use("interrupt", {"why": "x"}, id="int1")),
        answer("Fresh start."),
    )
    agent, events = make_agent(api, settings_for, permission_mode="auto")
    with pytest.raises(TurnAborted):
        agent.run_turn("run and stop")
    last = agent.session.messages[-1]
    assert [(b["tool_use_id"], b.get("is_error", False)) for b in last["content"]] == [("done1", False), ("int1", True)]
    # The front ends hear of the interrupted call too: its line stays in the scrollback, with what it printed.
    finished = [event for event in events if type(event).__name__ == "ToolFinished"]
    assert [event.tool_use_id for event in finished] == ["done1", "int1"]
    assert finished[1].result.killed_by == "Ctrl-C" and finished[1].result.is_error and finished[1].name == "interrupt"
    assert agent.run_turn("again").text == "Fresh start."


def test_every_tool_sees_the_users_original_request(api, settings_for):
    request = "Store the value exactly as I say: «ünïcode», and nothing else!"
    api.script(answer(tool_use("store", {"key": "k", "value": "v"})), answer("Stored."))
    agent, _ = make_agent(api, settings_for, permission_mode="auto")
    agent.run_turn(request)
    assert calls == [("store", ("k", "v", request))]


def test_piped_input_travels_beside_the_users_words_as_a_p0_block(api, settings_for):
    api.script(answer("Reviewed."))
    agent, _ = make_agent(api, settings_for)
    agent.run_turn("review this", stdin="-a = 1\n+a = 2")
    first = api.message_requests[0]["messages"][0]["content"]
    assert first[0] == {"type": "text", "text": "review this"}
    assert first[1]["text"] == '<context name="stdin" priority="P0">\n-a = 1\n+a = 2\n</context>'
    assert agent.session.messages[0]["content"][0] == {"type": "text", "text": "review this"}
