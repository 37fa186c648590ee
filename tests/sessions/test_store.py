"""Persistent sessions: the JSONL file as the log grows, loading up to damage, listing, and byte-identical resume."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import TEST_KEY, scripted_agent
from support.conversation import pairing_problems
from support.fake_api import answer, tool_use

from mini_agent.agent import Agent
from mini_agent.context.blocks import P0, P1, ContextBlock, Ledger
from mini_agent.context.tokens import TOKENIZER
from mini_agent.conversation import SUMMARY_HINT, Session
from mini_agent.sessions import (
    SessionBusy,
    SessionChanged,
    SessionNotFound,
    SessionStore,
    project_key,
)
from mini_agent.sessions.journal import read_journal, session_id
from mini_agent.sessions.resume import UNANSWERED, replay_ledger, resume_into
from mini_agent.usage import Usage

RESTORED = ("messages", "request", "hints", "instructions", "usage", "last_usage", "compactions")


def state(session: Session) -> dict:
    return {name: getattr(session, name) for name in RESTORED}


# ---- random sessions -----------------------------------------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30) | st.sampled_from(
    ['a "quoted" \\ path', "中文 <tag> &amp;", "line\nbreak", "lone \udcff surrogate", "</context>", "Never push."]
)
BLOCK = st.builds(
    lambda name, priority, text: ContextBlock(name, priority, text).render(),
    st.sampled_from(["environment", "git_state", 'file:a "b".txt', "project_instructions"]),
    st.sampled_from([P0, P1]),
    TEXT,
)
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), TEXT, st.lists(BLOCK, max_size=3)),
        st.tuples(st.just("reply"), TEXT, st.integers(0, 2), st.booleans()),
        st.tuples(st.just("usage"), st.lists(st.integers(0, 10**6), min_size=4, max_size=4)),
        st.tuples(st.just("hint"), st.sampled_from(["tool_degraded:web_fetch", "other"]), st.none() | TEXT),
        st.tuples(st.just("compact"), st.integers(0, 4), st.none() | TEXT),
    ),
    max_size=25,
)


def play(session: Session, operations: list[tuple]) -> None:
    """Drive a session the way the agent and the compactor do, ending with a message so hints are logged."""
    ids = itertools.count(1)
    for operation in [*operations, ("turn", "last", [])]:
        kind = operation[0]
        if kind == "turn":
            session.begin_turn(operation[1], [{"type": "text", "text": block} for block in operation[2]])
        elif kind == "reply":
            _, text, calls, answered = operation
            uses = [tool_use("bash", {"command": f"echo {n}"}, id=f"toolu_{n}") for n in itertools.islice(ids, calls)]
            session.append({"role": "assistant", "content": [{"type": "text", "text": text or "."}, *uses]})
            if uses and answered:
                results = [{"type": "tool_result", "tool_use_id": use["id"], "content": text} for use in uses]
                session.append({"role": "user", "content": results})
        elif kind == "usage":
            session.record_usage(Usage(*operation[1]))
        elif kind == "hint":
            _, key, value = operation
            if value is None:
                session.hints.pop(key, None)
            else:
                session.hints[key] = value
        else:
            _, keep, summary = operation
            head = {"role": "user", "content": [{"type": "text", "text": ContextBlock("compaction", P0, "x").render()}]}
            view = [head, *session.messages[len(session.messages) - keep :]] if keep else [head]
            session.replace_view(view, summary, {"compaction": {"trigger": "auto"}, "request": session.request})


def written(operations: list[tuple], directory: Path, secrets: tuple[str, ...] = ()) -> tuple[Session, Path]:
    store = SessionStore(directory / "data", secrets)
    session = Session()
    with store.create(directory, "claude-test") as writer:
        session.attach(writer.write)
        play(session, operations)
    return session, writer.path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS)
def test_write_load_restore_gives_back_the_session_as_it_was_in_memory(operations):
    with tempfile.TemporaryDirectory() as tmp:
        session, path = written(operations, Path(tmp))
        loaded = SessionStore(Path(tmp) / "data").load(session_id(path), tmp)
        assert loaded.damaged is None
        assert loaded.entries == json.loads(json.dumps(session.log))
        assert state(loaded.restore()) == state(session)
        assert state(Session.restore(session.log)) == state(session)  # a compaction's view is never changed after


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS, st.data())
def test_a_file_cut_anywhere_loads_every_entry_before_the_cut_and_says_where(operations, data):
    with tempfile.TemporaryDirectory() as tmp:
        _, path = written(operations, Path(tmp))
        content = path.read_bytes()
    full = read_journal(content)
    line_ends = [index for index, byte in enumerate(content) if byte == ord("\n")]
    cut = data.draw(st.integers(0, len(content)), label="cut")
    journal = read_journal(content[:cut])
    whole = sum(end <= cut for end in line_ends)  # lines whose last character is before the cut
    assert journal.header == (full.header if whole else None)
    assert journal.entries == full.entries[: max(0, whole - 1)]
    at_boundary = cut == 0 or cut in line_ends or cut - 1 in line_ends
    assert (journal.damaged is None) == at_boundary
    if journal.damaged:
        assert journal.damaged.startswith(f"line {whole + 1} (byte {line_ends[whole - 1] + 1 if whole else 0})")


def test_a_session_file_is_a_header_then_one_line_per_entry_as_the_log_grows(tmp_path):
    store = SessionStore(tmp_path / "data")
    session = Session()
    writer = store.create(tmp_path, "claude-test")
    session.attach(writer.write)
    assert not writer.path.exists()  # a session that never says anything leaves no file
    session.begin_turn("fix the parser", [{"type": "text", "text": ContextBlock("environment", P1, "env").render()}])
    lines = writer.path.read_text().splitlines()
    header = json.loads(lines[0])
    assert {k: header[k] for k in ("type", "id", "cwd", "model", "version")} == {
        "type": "session",
        "id": writer.id,
        "cwd": str(tmp_path),
        "model": "claude-test",
        "version": 1,
    }
    assert datetime.fromisoformat(header["created"]).tzinfo is not None
    assert json.loads(lines[1])["typed"] == "fix the parser" and len(lines) == 2  # on disk before the call returns
    session.record_usage(Usage(10, 5))
    assert json.loads(writer.path.read_text().splitlines()[2])["type"] == "usage"
    assert writer.path.parent == tmp_path / "data" / "sessions" / project_key(tmp_path)
    assert writer.path.name.endswith(f"-{writer.id}.jsonl") and oct(writer.path.stat().st_mode & 0o777) == "0o600"
    writer.close()


def test_secrets_never_reach_the_file_in_any_line(tmp_path):
    odd = 'pass"word\\with-escapes'
    operations = [
        ("turn", f"use the key {TEST_KEY} please", [ContextBlock("environment", P1, f"KEY={TEST_KEY}").render()]),
        ("reply", f"echo {odd}", 1, True),
        ("hint", "other", f"saw {odd}"),
        ("compact", 1, f"the summary mentions {TEST_KEY}"),
    ]
    session, path = written(operations, tmp_path, secrets=(TEST_KEY, odd))
    content = path.read_text()
    assert TEST_KEY not in content and json.dumps(odd)[1:-1] not in content
    assert content.count("****") >= 5
    loaded = SessionStore(tmp_path / "data").load(session_id(path), tmp_path)
    assert loaded.entries[0]["typed"] == "use the key **** please" and loaded.restore().hints["other"] == "saw ****"
    assert TEST_KEY in session.log[0]["typed"]  # only the file is masked: the live session keeps the real text


# ---- damage and continuing a file ----------------------------------------------------------------------------


def test_a_damaged_line_in_the_middle_stops_loading_there_and_says_what_was_left(tmp_path):
    _, path = written([("turn", "one", []), ("reply", "a", 0, False), ("turn", "two", [])], tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join([*lines[:2], b'{"type": "mess\n', *lines[2:]]))
    loaded = SessionStore(tmp_path / "data").load(session_id(path), tmp_path)
    assert [entry["typed"] for entry in loaded.entries] == ["one"]
    assert (
        loaded.damaged
        == f"line 3 (byte {len(lines[0] + lines[1])}) is not a log entry; the 3 lines after it were not read"
    )


def test_continuing_a_damaged_file_moves_the_cut_tail_aside_and_appends_whole_lines(tmp_path):
    store = SessionStore(tmp_path / "data")
    _, path = written([("turn", "one", []), ("reply", "a", 0, False)], tmp_path)
    whole = path.read_bytes()
    cut = b'{"type":"message","typed":"cut o'
    path.write_bytes(whole + cut)
    loaded = store.load(session_id(path), tmp_path)
    assert loaded.damaged == f"line 5 (byte {len(whole)}) is cut off; its {len(cut)} bytes were not read"
    session = loaded.restore()
    with store.reopen(loaded) as writer:
        session.attach(writer.write)
        session.begin_turn("two")
    assert Path(f"{path}.damaged-{len(whole)}").read_bytes() == cut
    again = store.load(loaded.info.id, tmp_path)
    assert again.damaged is None and [e.get("typed") for e in again.entries] == ["one", None, "last", "two"]
    assert [info.path for info in store.list(tmp_path)] == [path]  # the set-aside tail is not a session


def test_continuing_a_file_whose_last_line_lost_only_its_newline_starts_a_new_line(tmp_path):
    store = SessionStore(tmp_path / "data")
    _, path = written([("turn", "one", [])], tmp_path)
    path.write_bytes(path.read_bytes()[:-1])
    loaded = store.load(session_id(path), tmp_path)
    assert loaded.damaged is None and len(loaded.entries) == 2
    session = loaded.restore()
    with store.reopen(loaded) as writer:
        session.attach(writer.write)
        session.begin_turn("two")
    assert [e["typed"] for e in store.load(loaded.info, tmp_path).entries] == ["one", "last", "two"]


def test_a_session_open_in_one_writer_cannot_be_continued_by_another(tmp_path):
    store = SessionStore(tmp_path / "data")
    writer = store.create(tmp_path, "claude-test")
    writer.write({"type": "usage", "usage": Usage().to_dict()})
    loaded = store.load(writer.id, tmp_path)
    with pytest.raises(SessionBusy):
        store.reopen(loaded)
    writer.write({"type": "usage", "usage": Usage().to_dict()})
    writer.close()
    with pytest.raises(SessionChanged):  # it grew after the load: reopening would cut the new line off
        store.reopen(loaded)
    store.reopen(store.load(writer.id, tmp_path)).close()


# ---- listing -------------------------------------------------------------------------------------------------


def test_sessions_are_listed_newest_first_with_their_first_prompt_and_size(tmp_path):
    store = SessionStore(tmp_path / "data")
    prompts = ["first task", "second\n  task " + "x" * 300, "third task"]
    paths = []
    for index, prompt in enumerate(prompts):
        block = ContextBlock("environment", P1, f"session {index}").render()
        _, path = written([("turn", prompt, [block]), ("reply", "ok", 1, True)] * (index + 1), tmp_path)
        os.utime(path, (1_700_000_000 + index * (-1) ** index, 1_700_000_000 + index * (-1) ** index))
        paths.append(path)
    listed = store.list(tmp_path)
    assert [info.path for info in listed] == [paths[2], paths[0], paths[1]]
    assert [info.messages for info in listed] == [3 * 3 + 1, 3 + 1, 2 * 3 + 1]
    assert [info.bytes for info in listed] == [path.stat().st_size for path in (paths[2], paths[0], paths[1])]
    second = listed[2].first_prompt
    assert second.startswith("second task xxx") and len(second) == 200 and second.endswith("…")
    assert listed[0].first_prompt == "third task" and listed[0].model == "claude-test"
    assert store.latest(tmp_path) == listed[0]
    assert store.latest(tmp_path / "elsewhere") is None and store.list(tmp_path / "elsewhere") == []


def test_a_damaged_file_is_still_listed_with_its_whole_messages(tmp_path):
    store = SessionStore(tmp_path / "data")
    _, path = written([("turn", "one", []), ("reply", "a", 0, False)], tmp_path)
    with open(path, "ab") as file:
        file.write(b'{"type":"message","typed":"cut')
    (info,) = store.list(tmp_path)
    assert (info.messages, info.first_prompt) == (3, "one")


def test_a_session_is_found_by_its_id_or_a_unique_prefix(tmp_path):
    store = SessionStore(tmp_path / "data")
    _, path = written([("turn", "one", [])], tmp_path)
    for twin in ("abcd0001", "abcd0002"):
        (path.parent / f"20250101-000000-{twin}.jsonl").write_bytes(path.read_bytes())
    assert store.load(session_id(path)[:6], tmp_path).info.path == path
    assert store.load("abcd0002", tmp_path).info.id == "abcd0002"
    with pytest.raises(SessionNotFound, match="No session 'nope'"):
        store.load("nope", tmp_path)
    with pytest.raises(SessionNotFound, match="several sessions .*: abcd0001, abcd0002"):
        store.load("abcd", tmp_path)


def test_the_project_key_is_readable_and_tells_apart_paths_that_slug_alike(tmp_path):
    (tmp_path / "a" / "b-c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "a" / "b-c")
    hyphen, nested = project_key(tmp_path / "a" / "b-c"), project_key(tmp_path / "a" / "b" / "c")
    assert hyphen != nested and hyphen.rsplit("-", 1)[0] == nested.rsplit("-", 1)[0]
    assert hyphen.rsplit("-", 1)[0].endswith("-a-b-c")
    assert project_key(tmp_path / "link") == hyphen
    assert project_key("/").startswith("root-") and "/" not in project_key("/x y/中文")


# ---- the ledger ----------------------------------------------------------------------------------------------


def test_the_ledger_rebuilt_from_sent_messages_knows_each_block_exactly_as_sent():
    blocks = [
        ContextBlock('file:a "b".txt', P0, "x </context> y &lt;/context>"),
        ContextBlock("environment", P1, "Time: 10:00"),
    ]
    ledger = Ledger()
    ledger.rebuild([{"role": "user", "content": [{"type": "text", "text": "hi"}, *_rendered(blocks)]}])
    assert not any(ledger.is_new(block) for block in blocks)
    assert ledger.is_new(ContextBlock("environment", P1, "Time: 10:01"))
    assert ledger.priority('file:a "b".txt') == P0 and ledger.priority("git_state") is None


def test_a_replayed_ledger_forgets_what_a_compaction_did_not_show_again():
    instructions = ContextBlock("project_instructions", P0, "Be brief.")
    mention = ContextBlock("file:a.txt", P0, "alpha")
    environment = ContextBlock("environment", P1, "Time: 10:00")
    session = Session()
    session.begin_turn("read @a.txt", _rendered([instructions, mention, environment]))
    stubbed_only = Session.restore(session.log)
    stubbed_only.replace_view(list(stubbed_only.messages), None, {})
    assert set(replay_ledger(stubbed_only.log).sent) == {"project_instructions", "file:a.txt"}
    head = {"role": "user", "content": _rendered([ContextBlock("compaction", P0, "note"), instructions])}
    session.replace_view([head], "<summary/>", {})
    assert set(replay_ledger(session.log).sent) == {"project_instructions"}


def _rendered(blocks: list[ContextBlock]) -> list[dict]:
    return [{"type": "text", "text": block.render()} for block in blocks]


# ---- resuming an agent ---------------------------------------------------------------------------------------


class FrozenClock(datetime):
    """The environment block shows the time to the minute: every run sees the same minute."""

    @classmethod
    def now(cls, tz=None):
        return datetime(2025, 3, 14, 9, 26, tzinfo=UTC)


TURNS = [
    (
        "Read @notes.txt and list the files here.",
        [
            answer(
                "Looking.",
                tool_use("read_file", {"path": "notes.txt"}, id="t1"),
                tool_use("bash", {"command": "ls"}, id="t2"),
            ),
            answer("There are two files."),
        ],
    ),
    (
        "Write done.txt saying done.",
        [answer(tool_use("write_file", {"path": "done.txt", "content": "done\n"}, id="t3")), answer("Written.")],
    ),
    (
        "Now summarise the state of the repository.",
        [answer(tool_use("bash", {"command": "git status --short"}, id="t4")), answer("One new file, done.txt.")],
    ),
]
SUMMARY = answer("## Goals\nList files, write done.txt.\n## Current step\nSummarising.")


def git(project: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=project,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setattr("mini_agent.context.keeper.datetime", FrozenClock)
    # Recent activity names each call's time and duration: two runs on a loaded machine differ there, not in
    # what a resume rebuilds.
    monkeypatch.setattr("mini_agent.tool_calls.datetime", FrozenClock)
    monkeypatch.setattr("mini_agent.context.call_lines._seconds", lambda seconds: "0.0")
    TOKENIZER.wait()  # counts (in a compaction's report) must not depend on when tiktoken finished loading
    root = tmp_path / "project"
    root.mkdir()
    (root / "AGENTS.md").write_text("Answer briefly.\n")
    (root / "notes.txt").write_text("alpha\nbeta\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    return root


def build_agent(api, settings_for, project: Path) -> Agent:
    from mini_agent.app.build import context_keeper

    settings = settings_for(api, permission_mode="auto", cwd=project)
    return scripted_agent(settings, keeper=context_keeper)


def run_turns(api, agent: Agent, turns: list, compact_after_second: bool) -> list[dict]:
    """Run the turns; the request bodies the model received for them."""
    before = len(api.message_requests)
    for number, (text, replies) in enumerate(turns, start=1):
        api.script(*replies)
        agent.run_turn(text)
        if number == 2 and compact_after_second:
            api.script(SUMMARY)
            agent.keeper.compact_now(agent.session, agent.emit)
    return api.message_requests[before:]


def canonical(body: dict) -> str:
    return json.dumps(body, ensure_ascii=False)


@pytest.mark.parametrize("compact_after_second", [False, True], ids=["plain", "compacted"])
def test_a_resumed_agent_sends_byte_identical_requests(api, settings_for, project, compact_after_second):
    store = SessionStore(project.parent / "data", secrets=(TEST_KEY,))

    straight = build_agent(api, settings_for, project)
    with store.create(project, "claude-test") as writer:
        straight.session.attach(writer.write)
        uninterrupted = run_turns(api, straight, TURNS, compact_after_second)
    straight_id = writer.id
    git(project, "clean", "-fdq")  # undo turn 2's write: the second run starts from the same files

    first = build_agent(api, settings_for, project)
    with store.create(project, "claude-test") as writer:
        first.session.attach(writer.write)
        run_turns(api, first, TURNS[:2], compact_after_second)
    loaded = store.load(store.latest(project), project)
    assert loaded.info.id == writer.id and loaded.damaged is None

    second = build_agent(api, settings_for, project)
    with store.reopen(loaded) as continued:
        resume_into(second, loaded, continued)
        resumed = run_turns(api, second, TURNS[2:], compact_after_second=False)

    third_turn = uninterrupted[-len(resumed) :]
    assert [canonical(body) for body in resumed] == [canonical(body) for body in third_turn]
    sent_blocks = [block["text"] for block in resumed[0]["messages"][-1]["content"]]
    assert any(text.startswith('<context name="recent_activity"') for text in sent_blocks)  # rebuilt, re-sent
    assert second.session.usage == straight.session.usage and second.session.hints == straight.session.hints
    # The continued file holds what the uninterrupted run's file holds, entry for entry.
    assert store.load(writer.id, project).entries == store.load(straight_id, project).entries
    assert (SUMMARY_HINT in second.session.hints) == compact_after_second


def test_a_call_left_without_a_result_by_a_crash_gets_one_before_the_next_turn(api, settings_for, project):
    store = SessionStore(project.parent / "data")
    session = Session()
    with store.create(project, "claude-test") as writer:
        session.attach(writer.write)
        session.begin_turn("list the files")
        session.record_usage(Usage(100, 20))
        session.append({"role": "assistant", "content": [tool_use("bash", {"command": "ls"}, id="lost")]})
    loaded = store.load(writer.id, project)
    agent = build_agent(api, settings_for, project)
    with store.reopen(loaded) as continued:
        resume_into(agent, loaded, continued)
        api.script(answer("Done."))
        agent.run_turn("go on")
    sent = api.message_requests[-1]["messages"]
    assert pairing_problems(sent) == []
    assert sent[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "lost",
        "content": UNANSWERED,
        "is_error": True,
    }
    assert sent[2]["content"][1]["text"] == "go on"  # the new turn joins the settled results: roles alternate
    stored = [e["message"] for e in store.load(writer.id, project).entries if e["type"] == "message"]
    assert stored[2]["content"][0]["content"] == UNANSWERED  # the settled result is in the file too
