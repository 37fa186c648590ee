"""Conversations for compaction tests: random but always valid, and the validity check itself."""

from __future__ import annotations

from hypothesis import strategies as st

from mini_agent.context.summary_prompt import SUMMARY_SYSTEM

WORDS = ["fix", "the", "parser", "tests", "src/app.py", "quickly", "data", "中文", "<tag>", "&"]
RULES = [
    "Don't touch the tests.",
    "Never push to main.",
    "Always run ruff before committing.",
    "只改 src 目录。",
    "Keep the public API unchanged.",
    "Use tabs, not spaces & <never> mix them.",
]


@st.composite
def conversations(draw) -> list[tuple[str, list[tuple[int, int]], bool]]:
    """Turns: (user text, steps as (tool calls, result size), ends with a final answer)."""
    turns = []
    for index in range(draw(st.integers(min_value=1, max_value=4))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
        rules = draw(st.lists(st.sampled_from(RULES), max_size=2, unique=True))
        text = " ".join([f"Task {index}:", *words, "please.", *rules])
        steps = draw(
            st.lists(
                st.tuples(st.integers(min_value=1, max_value=3), st.integers(min_value=0, max_value=3_000)), max_size=5
            )
        )
        turns.append((text, steps, draw(st.booleans())))
    return turns


def build(session, turns) -> None:
    """Fill a Session the way the agent does."""
    call = 0
    for text, steps, answered in turns:
        session.begin_turn(text)
        for calls, size in steps:
            uses = []
            for _ in range(calls):
                call += 1
                uses.append({"type": "tool_use", "id": f"toolu_{call:04d}", "name": "bash", "input": {"n": call}})
            session.append({"role": "assistant", "content": [{"type": "text", "text": "Working."}, *uses]})
            results = [
                {"type": "tool_result", "tool_use_id": use["id"], "content": f"out {use['id']} " + "y" * size}
                for use in uses
            ]
            session.append({"role": "user", "content": results})
        if answered:
            session.append({"role": "assistant", "content": [{"type": "text", "text": "Done with that."}]})


def pairing_problems(messages: list[dict]) -> list[str]:
    """Everything that would make the API reject the tool pairing or the role order; empty when valid."""
    problems = []
    if messages and messages[0]["role"] != "user":
        problems.append("the first message is not the user's")
    for index, message in enumerate(messages):
        if index and messages[index - 1]["role"] == message["role"] == "assistant":
            problems.append(f"two assistant messages in a row at {index}")
        content = message["content"] if isinstance(message["content"], list) else []
        uses = [b["id"] for b in content if b.get("type") == "tool_use"]
        results = [b["tool_use_id"] for b in content if b.get("type") == "tool_result"]
        if uses:
            following = messages[index + 1]["content"] if index + 1 < len(messages) else []
            answered = [b.get("tool_use_id") for b in following if b.get("type") == "tool_result"]
            if sorted(answered) != sorted(uses):
                problems.append(f"tool_use {uses} at {index} answered by {answered}")
        if results:
            previous = messages[index - 1]["content"] if index else []
            asked = [b.get("id") for b in previous if b.get("type") == "tool_use"]
            if sorted(asked) != sorted(results):
                problems.append(f"tool_result {results} at {index} without its tool_use")
    return problems


def is_summary_request(body) -> bool:
    """The compactor's request to the summariser (not a step of the conversation)."""
    return isinstance(body, dict) and (body.get("system") or [{}])[0].get("text") == SUMMARY_SYSTEM


def without_cache_control(value):
    """A request body with its cache_control directives removed: what the prompt cache keys on."""
    if isinstance(value, dict):
        return {key: without_cache_control(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(item) for item in value]
    return value
