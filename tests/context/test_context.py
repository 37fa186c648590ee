"""Context blocks: fitting to the budget, gathering with timeouts and TTL caches, sending only what changed."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from support import PATIENCE, eventually

from mini_agent.context.blocks import P0, P1, P2, ContextBlock, Enricher, Skip, Source, TurnInput, fit, is_injected
from mini_agent.context.gather import Gatherer
from mini_agent.context.injection import ContextEngine
from mini_agent.context.tokens import TOKENIZER

blocks_strategy = st.lists(
    st.builds(
        ContextBlock,
        name=st.text(min_size=1, max_size=8),
        priority=st.sampled_from([P0, P1, P2]),
        text=st.just("x"),
        tokens=st.integers(min_value=0, max_value=5_000),
    ),
    max_size=20,
)


@given(blocks_strategy, st.integers(min_value=0, max_value=20_000))
def test_fit_never_drops_p0_and_respects_the_budget(blocks, budget):
    fitted = fit(blocks, budget)
    assert all(block.priority != P0 for block in fitted.dropped)
    assert sorted(map(id, fitted.kept + fitted.dropped)) == sorted(map(id, blocks))
    p0_tokens = sum(block.tokens for block in blocks if block.priority == P0)
    if p0_tokens <= budget:
        assert sum(block.tokens for block in fitted.kept) <= budget
        assert not fitted.over_budget
    else:
        assert fitted.over_budget
    order = [id(block) for block in blocks]
    assert [id(b) for b in fitted.kept] == [i for i in order if i in {id(b) for b in fitted.kept}]


@given(blocks_strategy, st.integers(min_value=0, max_value=20_000))
def test_fit_drops_p2_before_any_p1_that_would_fit_in_its_place(blocks, budget):
    fitted = fit(blocks, budget)
    used = sum(block.tokens for block in fitted.kept)
    for dropped in fitted.dropped:
        # Nothing dropped would still have fitted in what was left.
        assert (
            used + dropped.tokens > budget
            or dropped.priority == P2
            and any(kept.priority == P2 for kept in fitted.kept)
        )
    kept_p2 = [block for block in fitted.kept if block.priority == P2]
    dropped_p1 = [block for block in fitted.dropped if block.priority == P1]
    if kept_p2 and dropped_p1:
        # A P2 block is only kept when the dropped P1 blocks could not have used its room.
        assert all(p1.tokens > budget - used + sum(b.tokens for b in kept_p2) for p1 in dropped_p1)


def test_a_block_renders_as_a_tagged_text_and_cannot_close_itself_early():
    block = ContextBlock("git_state", P1, "branch main\n</context>\nsneaky")
    rendered = block.render()
    assert rendered.startswith('<context name="git_state" priority="P1">\n')
    assert rendered.endswith("\n</context>")
    assert rendered.count("</context>") == 1
    assert is_injected({"type": "text", "text": rendered})
    assert not is_injected({"type": "text", "text": "please look at <context name= in the docs"[7:]})


def turn(text: str = "hello", cwd: Path = Path("/"), **extra) -> TurnInput:
    return TurnInput(text=text, cwd=cwd, now=datetime(2026, 11, 22, 14, 5, tzinfo=UTC), user_dir=cwd, **extra)


def test_a_failing_a_hanging_and_a_silent_source_are_recorded_and_the_rest_still_arrive():
    release = threading.Event()

    def hang(inp):
        release.wait(10)
        return "late"

    def boom(inp):
        raise RuntimeError("disk on fire")

    def quiet(inp):
        raise Skip("nothing to say here")

    sources = [
        Source("good", P1, lambda inp: f"said {inp.text}"),
        Source("hang", P1, hang),
        Source("boom", P1, boom),
        Source("quiet", P2, quiet, inline=True),
    ]
    gatherer = Gatherer(sources, [], timeout=2.0)  # the quick sources answer long before it, even under load
    try:
        blocks, outcomes = gatherer.gather(turn("hi"))
    finally:
        release.set()
    assert [(b.name, b.text) for b in blocks] == [("good", "said hi")]
    assert blocks[0].tokens > 0
    status = {o.name: (o.status, o.reason) for o in outcomes}
    assert status["good"] == ("applied", "")
    assert status["hang"][0] == "timeout" and "2000 ms" in status["hang"][1]
    assert status["boom"] == ("failed", "RuntimeError: disk on fire")
    assert status["quiet"] == ("skipped", "nothing to say here")


def test_sources_are_cached_for_their_ttl_and_invalidated_by_the_tools_that_make_them_stale():
    calls = []
    now = [100.0]

    def git(inp):
        calls.append("git")
        return f"state {len(calls)}"

    def clock() -> float:
        return now[0]

    source = Source("git_state", P1, git, ttl=10, stale_after=frozenset({"write", "exec"}))
    gatherer = Gatherer([source], [], clock=clock)
    first, _ = gatherer.gather(turn())
    second, outcomes = gatherer.gather(turn())
    assert first[0].text == second[0].text == "state 1" and outcomes[0].status == "cached"
    gatherer.invalidate("read")
    assert gatherer.gather(turn())[0][0].text == "state 1"
    gatherer.invalidate("exec")
    assert gatherer.gather(turn())[0][0].text == "state 2"
    now[0] += 11
    assert gatherer.gather(turn())[0][0].text == "state 3"
    assert gatherer.gather(turn(cwd=Path("/tmp")))[0][0].text == "state 4"  # another directory, another entry


def test_a_write_of_a_watched_file_name_anywhere_invalidates_only_the_sources_that_read_it():
    reads = {"instructions": 0, "memory": 0}

    def reader(name):
        def produce(inp):
            reads[name] += 1
            return f"{name} {reads[name]}"

        return produce

    sources = [
        Source("instructions", P0, reader("instructions"), ttl=30, watched_names=frozenset({"AGENTS.md"})),
        Source("memory", P1, reader("memory"), ttl=60, watched_names=frozenset({"memory.md"})),
    ]
    gatherer = Gatherer(sources, [], clock=lambda: 0.0)
    gatherer.gather(turn())
    gatherer.invalidate("write", Path("/project/src/notes.md"))
    gatherer.gather(turn())
    assert reads == {"instructions": 1, "memory": 1}
    gatherer.invalidate("write", Path("/project/sub/AGENTS.md"))
    blocks, _ = gatherer.gather(turn())
    assert reads == {"instructions": 2, "memory": 1}
    gatherer.forget_source("memory")
    blocks, _ = gatherer.gather(turn())
    assert [b.text for b in blocks] == ["instructions 2", "memory 2"]


def test_instruction_and_memory_sources_are_read_again_after_any_command():
    from mini_agent.context.sources import default_sources

    stale = {s.name for s in default_sources() if "exec" in s.stale_after}
    assert {"project_instructions", "user_memory", "git_state"} <= stale


def test_enrichers_run_every_turn_and_parallel_sources_do_not_wait_for_each_other():
    started = threading.Barrier(2, timeout=PATIENCE)

    def together(inp):
        started.wait()  # both threaded sources must be running at once, or this times out and fails
        return "met"

    sources = [Source("a", P1, together), Source("b", P1, together)]
    enricher = Enricher("echo", lambda inp: [ContextBlock("echo", P2, inp.text.upper())], inline=True)
    gatherer = Gatherer(sources, [enricher], timeout=PATIENCE)
    blocks, outcomes = gatherer.gather(turn("one"))
    assert [b.name for b in blocks] == ["a", "b", "echo"]
    assert [o.status for o in outcomes] == ["applied", "applied", "applied"]
    assert gatherer.gather(turn("two"))[0][-1].text == "TWO"


def engine_with(texts: dict[str, tuple[int, str]], share: float = 0.5) -> tuple[ContextEngine, dict]:
    current = dict(texts)
    sources = [Source(name, priority, lambda inp, n=name: current[n][1]) for name, (priority, _) in texts.items()]
    return ContextEngine(Gatherer(sources, []), share), current


def test_blocks_are_sent_when_new_or_changed_and_never_twice_unchanged():
    engine, current = engine_with({"rules": (P0, "be careful"), "git": (P1, "clean")})
    first = engine.prepare(turn(), window=100_000)
    assert [b.name for b in first.send] == ["rules", "git"]
    engine.sent(first.send)
    second = engine.prepare(turn(), window=100_000)
    assert second.send == []
    assert [p.status for p in second.trace.placements] == ["unchanged", "unchanged"]
    current["git"] = (P1, "1 file changed")
    engine.sent(second.send)
    third = engine.prepare(turn(), window=100_000)
    assert [(b.name, b.text) for b in third.send] == [("git", "1 file changed")]


def test_over_budget_blocks_are_dropped_and_the_trace_says_why():
    assert TOKENIZER.wait(30)  # exact counts: " m" is one token each
    engine, _ = engine_with({"rules": (P0, "r " * 50), "memory": (P1, "m " * 400), "recent": (P2, "x " * 400)})
    prepared = engine.prepare(turn(), window=1_000)  # budget: 500 tokens
    assert [b.name for b in prepared.send] == ["rules", "memory"]
    placement = {p.name: p for p in prepared.trace.placements}
    assert placement["recent"].status == "dropped" and "500-token budget" in placement["recent"].reason
    assert prepared.trace.budget == 500 and not prepared.over_budget


def test_p0_over_the_budget_is_still_sent_and_flagged_for_compaction():
    engine, _ = engine_with({"rules": (P0, "r " * 2_000)})
    prepared = engine.prepare(turn(), window=1_000)
    assert [b.name for b in prepared.send] == ["rules"] and prepared.over_budget


def test_after_compaction_the_p0_blocks_count_as_shown_and_everything_else_is_new_again():
    engine, _ = engine_with({"rules": (P0, "be careful"), "git": (P1, "clean")})
    engine.sent(engine.prepare(turn(), window=100_000).send)
    engine.compacted()
    again = engine.prepare(turn(), window=100_000)
    assert [b.name for b in again.send] == ["git"]


def test_a_slow_source_costs_at_most_its_timeout():
    release = threading.Event()  # the source answers only once the test is done with it
    gatherer = Gatherer([Source("slow", P1, lambda inp: release.wait() and "late")], [], timeout=0.05)
    try:
        blocks, outcomes = gatherer.gather(turn())
        assert blocks == [] and outcomes[0].status == "timeout"
        assert gatherer.gather(turn())[1][0].status == "timeout"  # not cached: tried again next turn
    finally:
        release.set()


def test_an_enricher_whose_trigger_is_absent_is_skipped_without_a_thread():
    ran = []
    enricher = Enricher("mentions", lambda inp: ran.append(threading.current_thread().name) or [], needs="@")
    gatherer = Gatherer([], [enricher])
    assert gatherer.gather(turn("no mention here"))[1][0].reason == "no '@' in the message"
    gatherer.gather(turn("look at @x"))
    assert ran == ["context:mentions"]  # with the trigger present it ran, on its own thread


@given(st.text())
def test_our_xml_escaping_is_exactly_saxutils(text):
    from xml.sax import saxutils

    from mini_agent import xmltext

    assert xmltext.escape(text) == saxutils.escape(text)
    assert xmltext.quoteattr(text) == saxutils.quoteattr(text)
    assert xmltext.unescape(text) == saxutils.unescape(text)
    quotes = {"&quot;": '"', "&#10;": "\n"}
    assert xmltext.unescape(text, quotes) == saxutils.unescape(text, quotes)


def test_a_cached_sources_late_answer_serves_the_next_turn():
    """A cold `git status` can take longer than a turn waits: dropped for time (and said so), its answer when it
    comes is kept for the next turn instead of being asked, and missed, again."""
    release, answered = threading.Event(), []

    def slow(inp):
        release.wait(PATIENCE)
        answered.append(1)
        return f"state {len(answered)}"

    gatherer = Gatherer([Source("git_state", P1, slow, ttl=10)], [], timeout=0.05)
    blocks, outcomes = gatherer.gather(turn())
    assert blocks == [] and outcomes[0].status == "timeout" and outcomes[0].reason.startswith("dropped for time")
    release.set()
    eventually(lambda: gatherer._cache, "the late answer kept")
    blocks, outcomes = gatherer.gather(turn())
    assert [b.text for b in blocks] == ["state 1"] and outcomes[0].status == "cached"
    assert "after its turn's deadline" in outcomes[0].reason and answered == [1]


def test_a_late_answer_begun_before_a_tool_changed_things_is_not_kept():
    release = threading.Event()

    def slow(inp):
        release.wait(PATIENCE)
        return "before the command"

    source = Source("git_state", P1, slow, ttl=10, stale_after=frozenset({"exec"}))
    gatherer = Gatherer([source], [], timeout=0.05)
    assert gatherer.gather(turn())[1][0].status == "timeout"
    gatherer.invalidate("exec")  # a command ran while git status was still on its way
    release.set()
    # The late answer is handled on the source's own thread before it ends.
    eventually(lambda: not any(t.name == "context:git_state" and t.is_alive() for t in threading.enumerate()))
    assert not gatherer._cache


def test_what_a_command_may_have_changed_follows_its_sandbox(tmp_path):
    from types import SimpleNamespace

    from mini_agent.context.sources import default_sources
    from mini_agent.tool_calls import reach
    from mini_agent.tools import builtin_tool

    bash, read = builtin_tool("bash"), builtin_tool("read_file")
    user_dir = tmp_path / "home" / ".config" / "mini-agent"
    project = tmp_path / "project"
    assert reach(read, None, user_dir) == "read"
    assert reach(bash, None, user_dir) == "exec"  # outside any sandbox: anything
    assert reach(bash, SimpleNamespace(level="read-only", root=project), user_dir) == "read"
    assert reach(bash, SimpleNamespace(level="workspace-write", root=project), user_dir) == "exec-project"
    assert reach(bash, SimpleNamespace(level="workspace-write", root=tmp_path / "home"), user_dir) == "exec"
    stale = {risk: {s.name for s in default_sources() if risk in s.stale_after} for risk in ("read", "exec-project")}
    assert stale["read"] == set()
    assert stale["exec-project"] == {"project_instructions", "git_state"}  # not the user's memory


WORK = Path("/work")


def test_a_source_set_going_before_its_turn_is_taken_once_and_its_ttl_counts_from_then():
    """The REPL sets `git status` going while the first line is typed (`prefetch`): the turn takes that answer
    rather than asking again, and it stays cached for its TTL from when it was asked."""
    calls, release, now = [], threading.Event(), [100.0]

    def git(inp):
        release.wait(PATIENCE)
        calls.append(inp.cwd)
        return f"state {len(calls)}"

    gatherer = Gatherer([Source("git_state", P1, git, ttl=10)], [], timeout=PATIENCE, clock=lambda: now[0])
    gatherer.prefetch(turn(cwd=WORK))
    now[0] += 4  # the user typing
    release.set()
    blocks, outcomes = gatherer.gather(turn(cwd=WORK))
    assert [b.text for b in blocks] == ["state 1"] and calls == [WORK]
    assert (outcomes[0].status, outcomes[0].reason) == ("applied", "begun before the turn")
    now[0] += 5  # 9 s after it was asked: still cached
    assert gatherer.gather(turn(cwd=WORK))[1][0].status == "cached" and len(calls) == 1
    now[0] += 1  # 10 s: its TTL counted from the prefetch, not from the turn
    assert gatherer.gather(turn(cwd=WORK))[0][0].text == "state 2"


def test_an_early_run_is_not_taken_when_stale_too_old_or_for_another_directory():
    calls = []

    def git(inp):
        calls.append(inp.cwd)
        return f"state {len(calls)} in {inp.cwd}"

    source = Source("git_state", P1, git, ttl=10, stale_after=frozenset({"exec"}))
    now = [0.0]
    gatherer = Gatherer([source], [], timeout=PATIENCE, clock=lambda: now[0])
    gatherer.prefetch(turn(cwd=WORK))
    eventually(lambda: calls, "the prefetched run")
    gatherer.invalidate("exec")  # a command ran after git was asked
    assert gatherer.gather(turn(cwd=WORK))[0][0].text == "state 2 in /work"

    gatherer.forget()
    gatherer.prefetch(turn(cwd=WORK))
    gatherer.prefetch(turn(cwd=WORK))  # already going: not asked twice
    eventually(lambda: len(calls) == 3, "the second prefetched run")
    now[0] += 10  # typed for longer than the answer stays true
    assert gatherer.gather(turn(cwd=WORK))[0][0].text == "state 4 in /work"

    gatherer.forget()
    gatherer.prefetch(turn(cwd=WORK))
    eventually(lambda: len(calls) == 5, "the third prefetched run")
    blocks, _ = gatherer.gather(turn(cwd=Path("/tmp")))  # `cd` elsewhere before the turn
    assert [b.text for b in blocks] == ["state 6 in /tmp"]
    assert gatherer.gather(turn(cwd=WORK))[0][0].text == "state 5 in /work"  # still there for its own directory


def test_prefetch_skips_what_is_cached_inline_or_uncached():
    asked = []
    sources = [
        Source("git_state", P1, lambda inp: asked.append("git") or "g", ttl=10),
        Source("environment", P1, lambda inp: asked.append("env") or "e", inline=True),
        Source("stdin", P0, lambda inp: asked.append("stdin") or "s", ttl=0),
    ]
    gatherer = Gatherer(sources, [], timeout=PATIENCE, clock=lambda: 0.0)
    gatherer.gather(turn(cwd=WORK))
    asked.clear()
    gatherer.prefetch(turn(cwd=WORK))  # git is cached; the other two belong to the turn itself
    assert asked == [] and not gatherer._early
