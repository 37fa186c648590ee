"""The agent with its context keeper: injection beside the user's words, compaction triggers, overflow retry."""

from __future__ import annotations

from xml.sax.saxutils import unescape

import pytest
from support import scripted_agent
from support.conversation import build, is_summary_request, pairing_problems
from support.fake_api import answer, failure, tool_use

from mini_agent.app.build import context_keeper
from mini_agent.context.reports import ContextInjected
from mini_agent.context.tokens import TOKENIZER
from mini_agent.conversation import SUMMARY_HINT, Session
from mini_agent.events import Compacted, Notice
from mini_agent.tools import builtin_tool
from mini_agent.tools.base import ToolRegistry

SUMMARY = "## User goals and explicit instructions\nThe user wants the parser fixed.\n## Current step\nReading files."


def make(api, settings_for, session=None, keeper=context_keeper, registry=None, **overrides):
    settings = settings_for(api, permission_mode="auto", **overrides)
    events: list = []
    extra = {"registry": registry} if registry is not None else {}
    agent = scripted_agent(settings, emit=events.append, session=session, keeper=keeper, **extra)
    return agent, events


def test_enrichers_and_sources_go_beside_the_typed_text_which_is_stored_unchanged(api, settings_for, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    (tmp_path / "AGENTS.md").write_text("Always answer in English.\n")
    typed = "Summarise @notes.txt by tomorrow, see https://example.com/spec"
    api.script(answer("Done."))
    agent, events = make(api, settings_for)
    result = agent.run_turn(typed)
    content = api.message_requests[0]["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": typed}
    names = [block["text"].split('"')[1] for block in content[1:]]
    assert names[:1] == ["project_instructions"] and {"environment", "file:notes.txt", "time", "urls"} <= set(names)
    notes = next(b["text"] for b in content if b["text"].startswith('<context name="file:notes.txt"'))
    assert "1\talpha" in notes and "2\tbeta" in notes
    assert agent.session.messages[0]["content"][0] == {"type": "text", "text": typed}
    assert agent.session.request == typed and agent.ctx.request == typed
    trace = next(e.trace for e in events if isinstance(e, ContextInjected))
    assert result.trace is trace and trace.text == typed
    statuses = {o.name: o.status for o in trace.outcomes}
    assert statuses["mentions"] == statuses["time"] == statuses["urls"] == "applied"
    assert statuses["references"] == "skipped" and statuses["git_state"] == "skipped"
    assert {p.name for p in trace.placements if p.status == "injected"} == set(names)
    assert trace.injected_tokens > 0


def test_unchanged_blocks_are_not_sent_again_in_the_next_turn(api, settings_for, tmp_path):
    (tmp_path / "AGENTS.md").write_text("Be brief.\n")
    api.script(answer("One."), answer("Two."))
    agent, _ = make(api, settings_for)
    agent.run_turn("first")
    agent.run_turn("second")
    second_turn = api.message_requests[1]["messages"][2]["content"]
    assert second_turn[0]["text"] == "second"
    assert not any("project_instructions" in block["text"] for block in second_turn[1:])
    # The first request is a byte-identical prefix of the second (cache breakpoints aside).
    first = api.message_requests[0]["messages"]
    assert api.message_requests[1]["messages"][0]["content"][:-1] == first[0]["content"][:-1]


def test_crossing_the_threshold_compacts_before_the_next_request(api, settings_for, tmp_path):
    TOKENIZER.wait()  # one estimate, whether or not an earlier test loaded tiktoken: the sizes below rest on it
    for index in range(4):
        (tmp_path / f"f{index}.txt").write_text(f"file {index}\n" * 300)
    # The fourth request finds ~6,700 tokens (past half the window: the cheap stages), the fifth ~8,900 (past the
    # threshold, short of 95 %: the summary).
    steps = [
        answer(tool_use("read_file", {"path": f"f{i}.txt"}), usage={"input_tokens": tokens, "output_tokens": 50})
        for i, tokens in enumerate((2_000, 3_000, 5_000))
    ]
    steps.append(answer(tool_use("read_file", {"path": "f3.txt"}), usage={"input_tokens": 7_000, "output_tokens": 50}))
    api.script(*steps, answer(SUMMARY), answer("All read."))
    agent, events = make(api, settings_for, context_window=10_000)
    typed = "Read every file. Don't modify anything."
    agent.run_turn(typed)
    bodies = api.message_requests
    assert [is_summary_request(b) for b in bodies] == [False] * 4 + [True, False]
    after = bodies[5]
    assert (
        SUMMARY_HINT in after["system"][2]["text"] and "The user wants the parser fixed." in after["system"][2]["text"]
    )
    assert pairing_problems(after["messages"]) == []
    head = [block["text"] for block in after["messages"][0]["content"]]
    assert any(typed in text for text in head)  # the original request verbatim
    assert "Don't modify anything." in unescape(after["system"][2]["text"])  # the lost instruction restored
    cheap, report = (e.report for e in events if isinstance(e, Compacted))
    # Past half the window the cheap stages ran first (no model call); past the threshold, the summary.
    assert (cheap.zone, cheap.stages[0]) == ("cheap", "stubbed 2 old tool results") and cheap.summarised_messages == 0
    assert report.trigger == "auto" and report.zone == "summary" and report.after < report.before
    assert agent.session.compactions == 2


def zoned(api, settings_for, tmp_path, input_tokens: int):
    """Two turns; the second one's first reply reports `input_tokens` of a 10,000-token window, so its next request
    finds the conversation in that zone. The second turn's message carries the recent activity (a P2 block)."""
    TOKENIZER.wait()  # one estimate, whether or not an earlier test loaded tiktoken
    (tmp_path / "big.txt").write_text("a line of the file\n" * 40)  # 760 characters: a result long enough to stub
    api.script(
        answer(tool_use("read_file", {"path": "big.txt"}), usage={"input_tokens": 1_500, "output_tokens": 20}),
        answer("Read it.", usage={"input_tokens": 2_000, "output_tokens": 20}),
        answer(tool_use("read_file", {"path": "big.txt"}, id="t2"), usage={"input_tokens": input_tokens}),
    )
    api.script(answer("Done."))
    # read_file alone: the zones are fractions of a small window, which the built-in tools' schemas would fill
    agent, events = make(api, settings_for, registry=ToolRegistry([builtin_tool("read_file")]), context_window=10_000)
    agent.run_turn("Read big.txt. Don't modify anything.")
    agent.run_turn("Read it again.")
    return agent, [e.report for e in events if isinstance(e, Compacted)]


@pytest.mark.parametrize(
    ("input_tokens", "zone"), [(3_000, None), (6_000, "cheap"), (8_200, "summary"), (9_800, "danger")]
)
def test_each_zone_of_the_window_runs_its_own_stages(api, settings_for, tmp_path, input_tokens, zone):
    """Below half the window nothing; to the threshold (80 %) the cheap stages without a model call; past it the
    summary (here the stubs alone bring it under the goal, so none is asked for); past 95 % the P2 and P1 context
    blocks go first. Each report names its zone and its stages."""
    agent, reports = zoned(api, settings_for, tmp_path, input_tokens)
    assert [report.zone for report in reports] == ([zone] if zone else [])
    if zone == "cheap":
        assert reports[0].stages[0] == "stubbed 1 old tool results" and reports[0].summarised_messages == 0
    if zone == "danger":
        assert reports[0].stages[0].startswith("dropped 1 P2 ")
        assert reports[0].to_dict()["zone"] == "danger"


def test_thinning_drops_p2_blocks_shrinks_p1_ones_and_never_touches_the_user_s_words_or_p0():
    from mini_agent.context.blocks import ContextBlock
    from mini_agent.context.trim import P1_KEEP_CHARS, thin_context_blocks

    typed = {"type": "text", "text": "Fix the parser. " * 100}
    p0 = {"type": "text", "text": ContextBlock("project_instructions", 0, "Never delete data. " * 100).render()}
    p1 = {"type": "text", "text": ContextBlock("git_state", 1, "M src/a.py\n" * 300).render()}
    p2 = {"type": "text", "text": ContextBlock("recent_activity", 2, "- read_file ok\n" * 50).render()}
    messages = [{"role": "user", "content": [typed, p0, p1, p2]}, {"role": "assistant", "content": "ok"}]
    thinned, dropped, shrunk = thin_context_blocks(messages)
    (first, second, third), reply = thinned[0]["content"], thinned[1]
    assert (dropped, shrunk) == (1, 1) and first == typed and second == p0 and reply == messages[1]
    assert len(third["text"]) < P1_KEEP_CHARS + 300 and third["text"].endswith("</context>")
    assert messages[0]["content"][2] is p1  # the originals (the session's log) untouched


OVERFLOWS = {
    "anthropic": (400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
    "llama.cpp": (
        400,
        "exceed_context_size_error",
        "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
    ),
    "vllm": (400, "BadRequestError", "This model's maximum context length is 4096 tokens. However, you requested 5000"),
}


@pytest.mark.parametrize("family", OVERFLOWS)
def test_prompt_too_long_compacts_and_retries_once(api, settings_for, family):
    session = Session()
    build(session, [("Earlier task. Never delete data.", [(1, 3_000), (1, 3_000)], True)])
    api.script(
        failure(*OVERFLOWS[family]),
        answer(SUMMARY),
        answer("Fine now."),
    )
    agent, events = make(api, settings_for, session=session)
    result = agent.run_turn("Continue.")
    assert result.text == "Fine now."
    assert [is_summary_request(b) for b in api.message_requests] == [False, True, False]
    assert next(e.report for e in events if isinstance(e, Compacted)).trigger == "overflow"
    assert "Never delete data." in unescape(api.message_requests[2]["system"][2]["text"])


def test_a_second_prompt_too_long_is_reported_not_looped(api, settings_for):
    session = Session()
    build(session, [("Earlier task.", [(1, 3_000)], True)])
    too_long = "prompt is too long: 210000 tokens > 200000 maximum"
    api.script(
        failure(400, "invalid_request_error", too_long),
        answer(SUMMARY),
        failure(400, "invalid_request_error", too_long),
    )
    agent, _ = make(api, settings_for, session=session)
    try:
        agent.run_turn("Continue.")
    except Exception as exc:  # noqa: BLE001 - asserting on the type below
        error = exc
    from mini_agent.errors import ContextOverflow

    assert isinstance(error, ContextOverflow) and "too long" in str(error)


def test_after_three_failed_compactions_it_stops_trying_and_says_so(api, settings_for, tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    huge = "Read a.txt. " + "words that cannot be cut because the user typed them " * 1_200
    usage = {"input_tokens": 14_000, "output_tokens": 20}  # the API agrees: the conversation is too big
    steps = [answer(tool_use("read_file", {"path": "a.txt"}), usage=usage) for _ in range(5)]
    api.script(*steps, answer("Done.", usage=usage))
    agent, events = make(api, settings_for, context_window=10_000)
    agent.run_turn(huge)
    compactions = [e for e in events if isinstance(e, Compacted)]
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert len(compactions) == 3
    assert sum("failed 3 times in a row" in text for text in notices) == 1
    assert agent.session.messages[0]["content"][0]["text"] == huge  # the user's words are never cut


def test_p0_blocks_over_the_budget_compact_the_conversation_first(api, settings_for):
    session = Session()
    build(session, [("Earlier work. Keep the API stable.", [(1, 2_000), (1, 2_000)], True)])
    api.script(answer("Reviewed."))
    agent, events = make(api, settings_for, session=session, context_window=20_000)
    agent.run_turn("Review this diff.", stdin="+ changed line\n" * 1_000)  # ~4k tokens, 2k budget
    report = next(e.report for e in events if isinstance(e, Compacted))
    # The cheapest stage was enough here: old tool output became stubs, no summary was needed.
    assert report.trigger == "context" and report.stages == ["stubbed 2 old tool results"]
    sent = api.message_requests[0]["messages"]
    assert 'type="compacted"' in sent[2]["content"][0]["content"]
    assert sent[-1]["content"][0]["text"] == "Review this diff."
    assert sent[-1]["content"][1]["text"].startswith('<context name="stdin" priority="P0">')
    assert pairing_problems(sent) == []


def test_manual_compaction_with_a_focus_reaches_the_summariser(api, settings_for):
    session = Session()
    build(session, [("Port the CLI.", [(1, 200)], True), ("Now the tests.", [(1, 200)], True)])
    api.script(answer(SUMMARY))
    agent, events = make(api, settings_for, session=session)
    report = agent.keeper.compact_now(agent.session, agent.emit, "the CLI flags")
    assert report.trigger == "manual" and report.summarised_messages > 0
    assert "focus on: the CLI flags" in api.message_requests[0]["messages"][0]["content"][0]["text"]
    assert agent.session.messages[-1]["content"][0]["text"] == "Done with that."


def test_git_state_is_refreshed_after_a_write(api, settings_for, tmp_path):
    import subprocess

    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=tmp_path, check=True)
    api.script(
        answer(tool_use("write_file", {"path": "new.txt", "content": "hi\n"})), answer("Wrote it."), answer("Ok.")
    )
    agent, _ = make(api, settings_for)
    agent.run_turn("Create new.txt")
    agent.run_turn("And now?")
    first_git = next(
        b["text"] for b in api.message_requests[0]["messages"][0]["content"] if "git_state" in b["text"][:30]
    )
    second = api.message_requests[2]["messages"][-1]["content"]
    second_git = next(b["text"] for b in second if "git_state" in b["text"][:30])
    assert "new.txt" not in first_git and "new.txt" in second_git


def test_a_router_that_reports_zero_tokens_still_gets_an_overflow_compacted_and_retried(api, settings_for, tmp_path):
    for index in range(3):
        (tmp_path / f"f{index}.txt").write_text(f"line of file {index}\n" * 400)
    zero = {"input_tokens": 0, "output_tokens": 0}  # a router that does not count, as some gateways send
    api.script(
        *[answer(tool_use("read_file", {"path": f"f{i}.txt"}), usage=zero) for i in range(3)],
        answer("Read them all.", usage=zero),
        failure(*OVERFLOWS["anthropic"]),
        answer("Fine now.", usage=zero),
    )
    agent, events = make(api, settings_for)
    agent.run_turn("Read f0.txt, f1.txt and f2.txt. Never delete data.")
    result = agent.run_turn("Continue.")
    assert result.text == "Fine now."
    overflowed, retried = api.message_requests[4:]
    assert len(str(retried["messages"])) < len(str(overflowed["messages"])) // 2  # the old reads were cleared
    assert next(e.report for e in events if isinstance(e, Compacted)).trigger == "overflow"
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert sum("did not say how many tokens" in text for text in notices) == 1  # said once, not per reply
