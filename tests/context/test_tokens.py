"""Token accounting: exact from usage, estimated only for what is new, calibrated, with a fallback tokenizer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mini_agent.context.tokens import (
    TOKENIZER,
    ConversationSize,
    Tokenizer,
    count,
    count_messages,
    estimate_by_characters,
    message_text,
)
from mini_agent.usage import Usage


def text_message(role: str, body: str) -> dict:
    return {"role": role, "content": [{"type": "text", "text": body}]}


def test_the_offline_encoding_loads_and_counts_like_cl100k():
    assert TOKENIZER.wait(30)
    assert TOKENIZER.exact
    assert TOKENIZER.count("hello world") == 2
    assert TOKENIZER.count("") == 0


def test_an_encoding_that_cannot_load_falls_back_to_characters():
    broken = Tokenizer("no_such_encoding_anywhere")
    assert broken.wait(30) is False
    assert not broken.exact
    assert broken.count("x" * 400) == estimate_by_characters("x" * 400) == 100


def test_the_character_estimate_counts_cjk_as_about_a_token_each():
    assert estimate_by_characters("abcd" * 10) == 10
    assert estimate_by_characters("中文测试") == 4
    assert estimate_by_characters("") == 0


@given(st.text(max_size=300))
def test_the_character_estimate_is_never_negative_and_grows_with_text(text):
    assert 0 <= estimate_by_characters(text) <= estimate_by_characters(text + "more text")


def test_message_text_covers_every_block_kind_that_costs_tokens():
    message = {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "words"},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
            {"type": "thinking", "thinking": "hmm", "signature": "s"},
        ],
    }
    flat = message_text(message)
    assert "words" in flat and "bash" in flat and '"ls"' in flat and "hmm" in flat
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "out"}]}
    assert message_text(result) == "out"


def test_without_a_usage_figure_the_whole_conversation_and_overhead_are_estimated():
    size = ConversationSize()
    messages = [text_message("user", "hello " * 100)]
    assert size.measure(messages, overhead=1_000) == count_messages(messages) + 1_000


def test_after_a_reply_only_the_messages_added_since_are_estimated():
    size = ConversationSize()
    history = [text_message("user", "question " * 50), text_message("assistant", "answer " * 50)]
    size.measure(history[:1], overhead=500)
    size.observe(Usage(input_tokens=50_000, output_tokens=300), message_count=2)
    added = [text_message("user", "tool output " * 20)]
    # The anchor is exact: the old history is not re-counted, whatever it holds.
    assert size.measure(history + added, overhead=10**9) == 50_300 + round(count_messages(added) * size.ratio)


def test_each_usage_figure_calibrates_the_estimate_of_new_messages():
    size = ConversationSize()
    history = [text_message("user", "x")]
    size.measure(history, 0)
    size.observe(Usage(input_tokens=1_000, output_tokens=0), 1)
    added = [text_message("user", "word " * 2_000)]
    estimate = count_messages(added)
    size.measure(history + added, 0)
    # The API says the new message was twice as big as the estimate: the ratio moves toward 2.
    size.observe(Usage(input_tokens=1_000 + 2 * estimate, output_tokens=0), 2)
    assert 1.0 < size.ratio <= 2.0
    before = size.ratio
    size.measure(history + added, 0)
    size.observe(Usage(input_tokens=size.anchor_tokens, output_tokens=0), 2)  # nothing new: no evidence
    assert size.ratio == before


def test_a_compaction_resets_the_anchor_so_the_next_measure_is_a_full_estimate():
    size = ConversationSize()
    size.measure([text_message("user", "a")], 0)
    size.observe(Usage(input_tokens=90_000, output_tokens=100), 1)
    size.reset()
    compacted = [text_message("user", "summary " * 10)]
    assert size.measure(compacted, overhead=200) == round((count_messages(compacted) + 200) * size.ratio)


def test_a_history_shorter_than_the_anchor_is_measured_afresh():
    size = ConversationSize()
    size.measure([text_message("user", "a")] * 3, 0)
    size.observe(Usage(input_tokens=5_000, output_tokens=10), 3)
    shorter = [text_message("user", "b")]
    assert size.measure(shorter, overhead=0) == round(count_messages(shorter) * size.ratio)


def test_thinking_counts_in_the_current_turn_only_as_the_api_strips_earlier_turns_thinking():
    reasoning = "a long line of careful reasoning " * 50
    thought = {"type": "thinking", "thinking": reasoning, "signature": "s"}
    old = {"role": "assistant", "content": [thought, {"type": "text", "text": "ok"}]}
    call = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}}
    loop = {"role": "assistant", "content": [{"type": "thinking", "thinking": reasoning, "signature": "s2"}, call]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]}
    history = [{"role": "user", "content": "first"}, old, {"role": "user", "content": "second"}]
    plain = count_messages([history[0], {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}, history[2]])
    assert count_messages(history) == plain, "the earlier turn's thinking is not in the window"
    in_loop = count_messages([*history, loop, result])
    assert in_loop > plain + count(reasoning) - 5, "the current tool loop's thinking goes back and counts"


def test_an_image_counts_by_its_pixels_not_its_base64() -> None:
    import base64
    import io
    import os

    from PIL import Image

    from mini_agent.context.tokens import count_messages

    out = io.BytesIO()
    Image.frombytes("RGB", (300, 200), os.urandom(300 * 200 * 3)).save(out, "PNG")  # ~180 KB of base64
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": base64.b64encode(out.getvalue()).decode()}}  # fmt: skip
    text_only = [{"role": "user", "content": [{"type": "text", "text": "look"}]}]
    with_image = [{"role": "user", "content": [{"type": "text", "text": "look"}, image]}]
    result = {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "look"}, image]}
    in_result = [{"role": "user", "content": [result]}]

    assert count_messages(with_image) - count_messages(text_only) == 80  # 300 × 200 / 750
    assert count_messages(in_result) - count_messages(text_only) in range(80, 90)
