"""Compaction: stages, clean cuts, the request and every explicit instruction kept, through the real SDK."""

from __future__ import annotations

from xml.sax.saxutils import unescape

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.conversation import build, conversations, pairing_problems
from support.fake_api import FakeAnthropicAPI, answer

from mini_agent.context.blocks import P0, P1, ContextBlock
from mini_agent.context.compaction import Compactor, choose_cut, head_message
from mini_agent.context.tokens import count_messages
from mini_agent.context.trim import drop_dangling_tool_uses, stub_tool_results, truncate_long_blocks
from mini_agent.conversation import SUMMARY_HINT, Session
from mini_agent.instructions import explicit_instructions, missing_from
from mini_agent.model import AnthropicProvider
from mini_agent.settings import Settings

RULES_BLOCK = ContextBlock("project_instructions", P0, "# From /repo/AGENTS.md\nRun make check.")


def provider_for(api: FakeAnthropicAPI) -> AnthropicProvider:
    settings = Settings(base_url=api.url, api_key="sk-test", model="claude-test", max_retries=0, retry_base_delay=0)
    return AnthropicProvider(settings)


def measure(messages: list[dict]) -> int:
    return count_messages(messages)


def user_texts(messages: list[dict]) -> list[str]:
    return [
        block["text"]
        for message in messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text"
    ]


def kept_verbatim(item: str, session: Session) -> bool:
    """Kept as the model reads it: in the summary hint, said again in a context block (escaped, like everything
    put in one), or in the user's own words."""
    hint = unescape(session.hints.get(SUMMARY_HINT, ""))
    return item in hint or any(item in text or item in unescape(text) for text in user_texts(session.messages))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(min_value=0, max_value=3_000), st.booleans())
def test_compaction_keeps_pairs_whole_and_the_request_and_every_instruction_verbatim(turns, keep, faithful):
    session = Session()
    build(session, turns)
    before = [dict(m) for m in session.messages]
    api = FakeAnthropicAPI().start()
    try:
        # A careless summariser drops every instruction; a faithful one quotes them. Either way they survive.
        quoted = " ".join(f'"{item}"' for item in session.instructions) if faithful else ""
        api.script(answer(f"## User goals and explicit instructions\nWork on the task. {quoted}"))
        report = Compactor(provider_for(api), "claude-cheap").compact(
            session, measure, target=1, p0_blocks=[RULES_BLOCK], trigger="auto", emit=lambda e: None, keep_tokens=keep
        )
        summarised = bool(api.message_requests)
        if not summarised:
            api.replies.clear()
    finally:
        api.stop()
    assert pairing_problems(session.messages) == []
    assert kept_verbatim(session.request, session)
    for instruction in session.instructions:
        assert kept_verbatim(instruction, session), instruction
    if summarised:
        assert report.summarised_messages > 0 and SUMMARY_HINT in session.hints
        assert any(RULES_BLOCK.render() == text for text in user_texts(session.messages[:1]))
        if faithful:
            assert report.restored_instructions == 0
        sent = api.message_requests[0]
        assert sent["model"] == "claude-cheap" and "tools" not in sent
        assert session.request in sent["messages"][0]["content"][0]["text"]
    # Nothing is lost on disk: the log still holds every original message, then the marker with the view.
    messages_only = [entry for entry in session.log if entry["type"] == "message"]
    assert Session.restore(messages_only).messages == before
    if report.stages:
        assert session.log[-1]["type"] == "compaction" and session.log[-1]["view"] is session.messages
        restored = Session.restore(session.log)
        assert restored.messages == session.messages and restored.hints == session.hints


def test_the_cut_falls_before_an_assistant_message_and_keeps_what_fits():
    session = Session()
    build(session, [("first task", [(1, 100)], True), ("second task", [(2, 100), (1, 100)], False)])
    messages = session.messages
    everything = choose_cut(messages, keep_tokens=10**9)
    assert everything == 1  # keeps all but the first message
    latest = choose_cut(messages, keep_tokens=0)
    assert messages[latest]["role"] == "assistant" and latest == len(messages) - 2
    assert choose_cut([{"role": "user", "content": [{"type": "text", "text": "only"}]}], 100) is None


def test_old_long_tool_results_become_stubs_with_their_head_and_size():
    session = Session()
    build(session, [("task", [(1, 2_000), (1, 2_000)], False)])
    stubbed, count = stub_tool_results(session.messages, protect_from=3)
    assert count == 1
    old = stubbed[2]["content"][0]["content"]
    assert old.startswith("out toolu_0001 yyy") and 'type="compacted"' in old and 'original_chars="2015"' in old
    assert stubbed[4] is session.messages[4]  # the latest step is untouched
    assert session.messages[2]["content"][0]["content"].endswith("y" * 100)  # the original is not modified
    assert stub_tool_results(stubbed, protect_from=3)[1] == 0  # a stub is never stubbed again


def test_truncation_spares_the_users_words_and_the_context_blocks():
    long_text = "u" * 5_000
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": long_text}, {"type": "text", "text": RULES_BLOCK.render()}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "a" * 5_000}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "r" * 5_000}]},
    ]
    cut, count = truncate_long_blocks(messages, 2_000)
    assert count == 2
    assert cut[0]["content"][0]["text"] == long_text
    assert len(cut[1]["content"][0]["text"]) < 2_500 and 'type="truncated"' in cut[1]["content"][0]["text"]
    assert len(cut[2]["content"][0]["content"]) < 2_500


def test_a_dangling_tool_use_is_dropped_before_summarising():
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "lost", "name": "bash", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "never mind"}]},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}, {"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "fine"}]},
    ]
    cleaned = drop_dangling_tool_uses(messages)
    assert [m["role"] for m in cleaned] == ["user", "user", "assistant", "user"]
    assert cleaned[2]["content"][1]["id"] == "t"


def test_the_head_of_a_compacted_view_carries_the_request_and_the_p0_blocks_only():
    memory = ContextBlock("user_memory", P1, "likes tabs")
    head = head_message("Refactor X. Don't touch tests.", False, [RULES_BLOCK, memory], 2)
    texts = [block["text"] for block in head["content"]]
    assert texts[0].startswith('<context name="compaction" priority="P0">') and "compaction 2" in texts[0]
    assert texts[1] == '<context name="original_request" priority="P0">\nRefactor X. Don\'t touch tests.\n</context>'
    assert texts[2] == RULES_BLOCK.render() and len(texts) == 3
    assert len(head_message("req", True, [], 1)["content"]) == 1


def test_instructions_are_found_in_english_and_chinese_and_checked_verbatim():
    text = "Fix the parser. Don't touch the tests! 只改 src 目录。The weather is nice."
    found = explicit_instructions(text)
    assert found == ["Don't touch the tests!", "只改 src 目录。"]
    assert missing_from('We must not "Don\'t  touch the tests!" ok', found) == ["只改 src 目录。"]


def test_a_failed_summary_falls_back_to_truncation_and_reports_the_error():
    session = Session()
    build(session, [("task one", [(1, 5_000)], True), ("task two", [(1, 5_000)], False)])
    api = FakeAnthropicAPI().start()
    try:
        from support.fake_api import failure

        api.script(failure(400, "invalid_request_error", "model not found"))
        report = Compactor(provider_for(api), "claude-cheap").compact(
            session, measure, target=1, p0_blocks=[], trigger="auto", emit=lambda e: None
        )
    finally:
        api.stop()
    assert "summary request failed" in report.error
    assert report.stages and "truncated" in report.stages[-1]
    assert pairing_problems(session.messages) == []
    assert SUMMARY_HINT not in session.hints


@pytest.mark.parametrize("focus", [None, "the database migration"])
def test_the_summary_prompt_quotes_the_request_lists_instructions_and_names_the_focus(focus):
    session = Session()
    build(session, [("Migrate the DB. Never drop tables.", [(1, 100), (1, 100)], False)])
    api = FakeAnthropicAPI().start()
    try:
        api.script(answer('## User goals and explicit instructions\n"Never drop tables."'))
        Compactor(provider_for(api), "m").compact(
            session, measure, 1, [], "manual", lambda e: None, focus=focus, keep_tokens=0
        )
        prompt = api.message_requests[0]["messages"][0]["content"][0]["text"]
        system = api.message_requests[0]["system"][0]["text"]
    finally:
        api.stop()
    assert "<request>\nMigrate the DB. Never drop tables.\n</request>" in prompt
    assert '- "Never drop tables."' in prompt
    for section in ("User goals and explicit instructions", "Decisions", "Files", "Errors and fixes", "Pending"):
        assert f"## {section}" in prompt
    assert ("focus on: the database migration" in prompt) == (focus is not None)
    assert system.startswith("You write hand-off summaries")


def test_a_summary_carries_the_todo_list_whose_calls_it_summarised():
    from mini_agent.tools.todo_list import Todo

    session = Session()
    build(session, [("task one", [(1, 5_000)], True), ("task two", [(1, 5_000)], False)])
    session.record_todos((Todo("Fix the parser", "completed"), Todo("Run the tests", "in_progress")))
    api = FakeAnthropicAPI().start()
    try:
        api.script(answer("## User goals\nWork on the task."))
        Compactor(provider_for(api), "claude-cheap").compact(
            session, measure, target=1, p0_blocks=[], trigger="auto", emit=lambda e: None, keep_tokens=0
        )
    finally:
        api.stop()
    hint = unescape(session.hints[SUMMARY_HINT])
    assert "- [completed] Fix the parser\n- [in_progress] Run the tests" in hint
