"""Thinking and effort at the endpoint: what each level sends to which model, and what happens when an endpoint
refuses it. In process, the real provider against the loopback model, whose request rules hold every body to
extended thinking's rules (a budget of at least 1,024 under max_tokens, a tool loop begun with thinking)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import scripted_agent
from support.fake_api import answer, cut, failure, thinking, tool_use

from mini_agent.events import Notice, Thought
from mini_agent.model.thinking import (
    BUDGETS,
    INTERLEAVED_BETA,
    THINKING_BLOCKS,
    plan,
    seal,
    support_for,
    without_thinking,
)
from mini_agent.tools.base import ToolContext, ToolRegistry, tool


@tool(risk="read", guidance="Look things up.")
def lookup(ctx: ToolContext, key: str) -> str:
    """Look up a key.

    Args:
        key: What to look up.
    """
    return f"value of {key}"


def agent_for(api, settings_for, **overrides):
    events: list = []
    settings = settings_for(api, **{"provider": "anthropic", "model": "claude-sonnet-4-5", **overrides})
    return scripted_agent(settings, registry=ToolRegistry([lookup]), emit=events.append), events


def notices(events) -> list[str]:
    return [event.text for event in events if isinstance(event, Notice)]


@pytest.mark.parametrize("level", ["low", "medium", "high", "max"])
def test_each_level_sends_its_budget_with_room_for_the_answer_and_the_interleaved_header(api, settings_for, level):
    api.script(answer(thinking("Think.", "sig-1"), "Hi."))
    agent, _ = agent_for(api, settings_for, effort=level)
    agent.run_turn("hello")
    body = api.message_requests[0]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS[level]}
    assert body["max_tokens"] > BUDGETS[level] and "temperature" not in body and "top_k" not in body
    assert "output_config" not in body
    sent = next(r for r in api.requests if r.method == "POST")
    assert INTERLEAVED_BETA in sent.headers.get("anthropic-beta", "")


def test_off_sends_nothing_and_keeps_max_tokens(api, settings_for):
    api.script(answer("Hi."))
    agent, _ = agent_for(api, settings_for, effort="off", max_tokens=4096)
    agent.run_turn("hello")
    body = api.message_requests[0]
    assert "thinking" not in body and "output_config" not in body and body["max_tokens"] == 4096
    assert "anthropic-beta" not in next(r for r in api.requests if r.method == "POST").headers


@pytest.mark.parametrize(
    ("family", "model"),
    [
        ("ollama", "qwen3-coder"),
        ("vllm", "Qwen/Qwen3-32B"),
        ("llamacpp", "gpt-oss"),
        (None, "claude-sonnet-4-5"),
        ("anthropic", "claude-3-5-haiku-latest"),
        ("openrouter", "openai/gpt-5"),
    ],
)
def test_a_model_or_endpoint_not_known_to_think_is_sent_nothing(api, settings_for, family, model):
    api.script(answer("Hi."))
    agent, _ = agent_for(api, settings_for, provider=family, model=model, effort="high")
    agent.run_turn("hello")
    body = api.message_requests[0]
    assert "thinking" not in body and "output_config" not in body


def test_claude_4_6_and_later_get_adaptive_thinking_with_the_endpoints_own_effort(api, settings_for):
    api.script(answer("Hi."), answer("Again."))
    agent, _ = agent_for(api, settings_for, model="claude-opus-4-6", effort="max")
    agent.run_turn("hello")
    agent.set_effort("low")
    agent.run_turn("again")
    first, second = api.message_requests
    # summarized: the newer models' default display (omitted) would send thinking blocks without their text
    assert first["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert first["output_config"] == {"effort": "max"}
    assert second["output_config"] == {"effort": "low"} and second["max_tokens"] == first["max_tokens"]


def test_what_the_endpoint_says_of_the_model_decides_before_its_name(api, settings_for):
    unsupported, supported = {"supported": False}, {"supported": True}
    api.model_info = {
        "id": "claude-opus-4-5",
        "max_input_tokens": 200_000,
        "capabilities": {
            "thinking": {"supported": True, "types": {"adaptive": supported, "enabled": supported}},
            "effort": {"supported": True, "low": supported, "medium": supported, "high": supported, "max": unsupported},
        },
    }
    api.script(answer("Hi."))
    agent, _ = agent_for(api, settings_for, model="claude-opus-4-5", effort="max")
    agent.provider.warm_up()
    agent.run_turn("hello")
    body = api.message_requests[0]
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"}
    assert body["output_config"] == {"effort": "high"}


def test_the_capability_rule_covers_the_compatible_providers():
    budget = {
        "https://api.deepseek.com/anthropic",
        "https://api.moonshot.ai/anthropic",
        "https://open.bigmodel.cn/api/anthropic",
        "https://dashscope-intl.aliyuncs.com/apps/anthropic",
        "https://api.minimax.io/anthropic",
    }
    for url in budget:
        assert support_for("compatible", url, "any-model").kind == "budget", url
    assert support_for("compatible", "http://localhost:11434", "claude-sonnet-4-5").kind == "none"
    assert support_for("anthropic", "https://api.anthropic.com", "claude-3-7-sonnet-20250219").kind == "budget"
    assert not support_for("anthropic", "", "claude-3-7-sonnet-20250219").interleaved_beta
    assert support_for("anthropic", "", "claude-sonnet-4-20250514").interleaved_beta
    assert support_for("openrouter", "", "anthropic/claude-opus-4.7").kind == "adaptive"
    assert support_for("anthropic", "", "claude-opus-5").kind == "adaptive"
    # a bigger max_tokens is kept; a smaller one is raised above the budget
    adaptive, manual = support_for("anthropic", "", "claude-opus-4-6"), support_for("anthropic", "", "claude-opus-4-1")
    assert plan(manual, "high", 64_000).max_tokens is None
    assert plan(manual, "max", 1_000).max_tokens == 32_000
    assert plan(adaptive, "off", 8192).fields == {}


def test_claude_5_thinks_by_default_so_off_still_asks_to_see_what_it_writes(api, settings_for):
    """Sonnet 5.5 (the default model) thinks whatever the request says and sends its words between tool calls as
    thinking, omitted by default: with effort off the request asks for them summarized and sets no effort."""
    support = support_for("anthropic", "", "claude-sonnet-5-5")
    assert support.thinks_by_default and plan(support, "off", 8192).fields == {
        "thinking": {"type": "adaptive", "display": "summarized"}
    }
    api.script(answer("Hi."))
    agent, _ = agent_for(api, settings_for, model="claude-sonnet-5-5")
    agent.run_turn("hello")
    body = api.message_requests[0]
    assert body["thinking"] == {"type": "adaptive", "display": "summarized"} and "output_config" not in body


def test_thinking_and_redacted_thinking_go_back_unchanged_with_the_tool_call(api, settings_for):
    redacted = {"type": "redacted_thinking", "data": "EncryptedBlob=="}
    first = [thinking("Look it up first.", "sig-A"), redacted, tool_use("lookup", {"key": "k"}, id="t1")]
    api.script(answer(*first), answer(thinking("Now answer.", "sig-B"), "It is k."))
    agent, events = agent_for(api, settings_for, effort="medium")
    agent.run_turn("what is k?")
    second = api.message_requests[1]
    assert second["messages"][1]["content"] == first
    assert second["thinking"]["type"] == "enabled"
    assert [(e.text, e.redacted) for e in events if isinstance(e, Thought)] == [
        ("Look it up first.", False),
        ("", True),
        ("Now answer.", False),
    ]


def test_an_endpoint_that_refuses_thinking_is_told_once_and_the_session_goes_on_without(api, settings_for):
    api.script(
        failure(400, "invalid_request_error", "thinking: Extra inputs are not permitted"),
        answer("Hi."),
        answer("Again."),
    )
    agent, events = agent_for(api, settings_for, provider="deepseek", model="deepseek-v4-pro", effort="high")
    assert agent.run_turn("hello").text == "Hi."
    agent.run_turn("again")
    refused, retried, later = api.message_requests
    assert "thinking" in refused and "thinking" not in retried and "thinking" not in later
    assert len([text for text in notices(events) if "does not take thinking" in text]) == 1


def test_a_rejected_signature_takes_that_thinking_out_and_the_request_is_sent_again_once(api, settings_for):
    old = thinking("Signed by the other model.", "sig-old")
    api.script(
        answer(old, tool_use("lookup", {"key": "k"}, id="t1")),
        failure(400, "invalid_request_error", "messages.1.content.0: Invalid `signature` in `thinking` block"),
        answer("It is k."),
        answer("Still k."),
    )
    agent, events = agent_for(api, settings_for, effort="low")
    assert agent.run_turn("what is k?").text == "It is k."
    agent.run_turn("and now?")
    _, rejected, retried, later = api.message_requests
    assert old in rejected["messages"][1]["content"]
    for body in (retried, later):
        assert "sig-old" not in str(body["messages"])
    # the retried tool loop began with thinking that is now gone: it goes on without a budget (one configuration
    # per turn); the next turn thinks again
    assert "thinking" not in retried and later["thinking"]["type"] == "enabled"
    assert any("signature" in text for text in notices(events))


def test_a_stream_cut_inside_a_thinking_block_is_asked_again_and_nothing_half_is_kept(api, settings_for):
    whole = answer(thinking("A long chain of reasoning about k.", "sig-W"), tool_use("lookup", {"key": "k"}, id="t1"))
    api.script(cut(answer(thinking("A long chain of reasoning about k.", "sig-W"), "x"), 4), whole, answer("k."))
    agent, events = agent_for(api, settings_for, effort="high")
    agent.run_turn("k?")
    kept = api.message_requests[-1]["messages"][1]["content"]
    assert kept[0] == thinking("A long chain of reasoning about k.", "sig-W")
    assert [e.text for e in events if isinstance(e, Thought)] == ["A long chain of reasoning about k."]


def test_unsigned_thinking_from_a_compatible_server_is_shown_but_not_sent_back(api, settings_for):
    unsigned = {"type": "thinking", "thinking": "No signature here.", "signature": ""}
    api.script(answer(unsigned, tool_use("lookup", {"key": "k"}, id="t1")), answer("k."))
    agent, events = agent_for(api, settings_for, provider=None, base_url=api.url, model="glm-5", effort="high")
    agent.run_turn("k?")
    assert [b["type"] for b in api.message_requests[1]["messages"][1]["content"]] == ["tool_use"]
    assert any("'thinking' block" in text for text in notices(events))


@given(
    level=st.sampled_from(["off", "low", "medium", "high", "max"]),
    model=st.sampled_from(["claude-sonnet-4-5", "claude-3-7-sonnet-latest", "claude-opus-4-1", "claude-opus-4-6"]),
    max_tokens=st.integers(min_value=1, max_value=200_000),
)
def test_a_budget_is_always_at_least_the_floor_and_below_max_tokens(level, model, max_tokens):
    chosen = plan(support_for("anthropic", "", model), level, max_tokens)
    budget = chosen.fields.get("thinking", {}).get("budget_tokens")
    if budget is not None:
        assert 1024 <= budget < (chosen.max_tokens or max_tokens) <= max(max_tokens, 32_000)


@given(
    st.lists(st.sampled_from(["sig-1", "sig-2", "data-1", "text", "call"]), max_size=6),
    st.sets(st.sampled_from(["sig-1", "sig-2", "data-1"])),
)
def test_taking_thinking_out_never_leaves_an_empty_reply_and_keeps_every_other_block(kinds, seals):
    blocks = {
        "sig-1": thinking("a", "sig-1"),
        "sig-2": thinking("b", "sig-2"),
        "data-1": {"type": "redacted_thinking", "data": "data-1"},
        "text": {"type": "text", "text": "t"},
        "call": tool_use("lookup", {"key": "k"}, id="t1"),
    }
    content = [blocks[kind] for kind in kinds] or [blocks["text"]]
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": content}]
    reply = without_thinking(messages, set(seals))[1]["content"]
    assert reply and all(seal(block) not in seals for block in reply if block.get("type") in THINKING_BLOCKS)
    assert [b for b in reply if b.get("type") in ("text", "tool_use")] == [
        b for b in messages[1]["content"] if b.get("type") in ("text", "tool_use")
    ] or reply == [{"type": "text", "text": "(thought, not kept)"}]


def test_a_request_for_another_model_than_the_sessions_gets_that_models_kind_of_thinking(api, settings_for):
    # a sub-agent whose definition names its own model shares the session's provider
    from mini_agent.model import AnthropicProvider, Request

    api.script(answer("Hi."))
    provider = AnthropicProvider(settings_for(api, provider="anthropic", model="claude-opus-4-6"))
    user = [{"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    provider.complete(Request("claude-sonnet-4-5", [], user, [], 8192, effort="low"), lambda event: None)
    assert api.message_requests[0]["thinking"] == {"type": "enabled", "budget_tokens": BUDGETS["low"]}
