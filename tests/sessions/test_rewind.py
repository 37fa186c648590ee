"""Rewinds and forks in the session journal: the rewound conversation is what the log held before that prompt,
nested rewinds, a rewind or fork cut by kill -9, forking a session another process has open, and
`--fork-session` from the command line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.fake_api import answer

from mini_agent.conversation import Session
from mini_agent.files.pending import sweep
from mini_agent.sessions import SessionBusy, SessionStore
from mini_agent.sessions.journal import read_journal
from mini_agent.sessions.rewind import conversation_entries, prompts, rewind_entry
from mini_agent.usage import Usage

RESTORED = ("messages", "request", "hints", "instructions", "last_usage", "compactions")

STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.text(max_size=12)),
        st.tuples(st.just("reply"), st.text(min_size=1, max_size=12)),
        st.tuples(st.just("hint"), st.text(max_size=5)),
        st.tuples(st.just("compact"), st.integers(0, 3)),
        st.tuples(st.just("rewind"), st.integers(0, 20)),
    ),
    max_size=30,
)


def state(session: Session) -> dict:
    return {name: getattr(session, name) for name in RESTORED}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(STEPS)
def test_a_rewound_log_restores_the_session_the_log_held_just_before_that_prompt(steps):
    """However rewinds, compactions and hint changes interleave, the session a rewound log restores is the one
    restored from the conversation's entries before that prompt; only the tokens spent keep counting."""
    session = Session()
    for kind, value in [*steps, ("turn", "last")]:
        if kind == "turn":
            session.begin_turn(value)
        elif kind == "reply":
            session.append({"role": "assistant", "content": [{"type": "text", "text": value}]})
            session.record_usage(Usage(10, 1))
        elif kind == "hint":
            session.hints["note"] = value
        elif kind == "compact":
            head = {"role": "user", "content": [{"type": "text", "text": "summary"}]}
            kept = session.messages[len(session.messages) - value :] if value else []
            session.replace_view([head, *kept], None, {})
        else:
            found = prompts(session.log)
            if not found:
                continue
            prompt = found[value % len(found)]
            before = Session.restore(conversation_entries(session.log)[: prompt.keep])
            log = [*session.log, rewind_entry(prompt)]
            session = Session.restore(conversation_entries(log))
            session.log = log
            assert state(session) == state(before)
            assert [p.typed for p in prompts(log)] == [p.typed for p in found[: prompt.number - 1]]


def test_a_rewind_that_names_more_entries_than_there_are_is_ignored():
    session = Session()
    session.begin_turn("one")
    bad = [{"type": "rewind", "keep": 99}, {"type": "rewind", "keep": "1"}, {"type": "rewind", "keep": -1}]
    log = [*session.log, *bad]
    assert conversation_entries(log) == session.log


def written_session(tmp_path, turns=("first", "second", "third")):
    store = SessionStore(tmp_path / "data")
    session = Session()
    with store.create(tmp_path, "claude-test") as writer:
        session.attach(writer.write)
        for text in turns:
            session.begin_turn(text)
            session.append({"role": "assistant", "content": [{"type": "text", "text": f"answer to {text}"}]})
    return store, writer.path


def test_a_rewind_cut_anywhere_by_a_kill_resumes_before_or_after_it(tmp_path):
    store, path = written_session(tmp_path)
    loaded = store.load(path, tmp_path)
    with store.reopen(loaded) as writer:
        writer.write(rewind_entry(prompts(loaded.journal.entries)[1]))
    whole = path.read_bytes()
    line_start = whole.rstrip(b"\n").rfind(b"\n") + 1
    typed_now = {("first", "second", "third"), ("first",)}
    for cut in range(line_start, len(whole) + 1):
        path.write_bytes(whole[:cut])
        cut_load = store.load(path, tmp_path)
        typed = tuple(p.typed for p in prompts(cut_load.journal.entries))
        assert typed in typed_now, cut
        assert len(cut_load.restore().messages) == 2 * len(typed)
        with store.reopen(cut_load):  # and it can be continued: a cut tail is set aside
            pass


def test_a_fork_killed_midway_leaves_no_session_and_its_temporary_file_is_swept(tmp_path):
    store, path = written_session(tmp_path, [f"turn {n}" for n in range(20)])
    original = path.read_bytes()
    child = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from mini_agent.sessions import SessionStore
        from mini_agent.sessions.journal import SessionWriter
        written = []
        real = SessionWriter.write
        def write(self, entry):
            real(self, entry)
            written.append(entry)
            if len(written) == 15:
                os.kill(os.getpid(), signal.SIGKILL)
        SessionWriter.write = write
        store = SessionStore(Path({str(tmp_path / "data")!r}))
        store.fork(store.load(Path({str(path)!r}), {str(tmp_path)!r}), {str(tmp_path)!r}, "claude-test")
        """
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    assert [info.path for info in store.list(tmp_path)] == [path]  # no half fork is a session
    assert path.read_bytes() == original
    left = [name for name in os.listdir(path.parent) if name.endswith(".tmp")]
    assert len(left) == 1
    assert [p.name for p in sweep(tmp_path / "data")] == left  # its owner is dead: swept at the next start
    assert not [name for name in os.listdir(path.parent) if name.endswith(".tmp")]


def test_a_session_open_in_another_process_can_be_forked_but_not_continued(tmp_path):
    store, path = written_session(tmp_path)
    loaded = store.load(path, tmp_path)
    with store.reopen(loaded) as busy:
        with pytest.raises(SessionBusy):
            store.reopen(store.load(path, tmp_path))
        forked = store.fork(store.load(path, tmp_path), tmp_path, "claude-test")
        with store.reopen(forked) as writer:  # the fork is a session of its own, free to continue
            writer.write({"type": "message", "message": {"role": "user", "content": "more"}})
        busy.write({"type": "message", "message": {"role": "user", "content": "still mine"}})
    assert forked.info.id != loaded.info.id and forked.header["forked_from"] == loaded.info.id
    assert forked.entries == loaded.entries
    assert read_journal(path.read_bytes()).entries[-1]["message"]["content"] == "still mine"


# ---- from the command line -------------------------------------------------------------------------------------


def test_fork_session_continues_a_copy_under_a_new_id_and_leaves_the_original_unchanged(run_cli, api, tmp_path):
    api.script(answer("Four."), answer("You asked about 2+2."), answer("Only 2+2."))
    first = run_cli(["-p", "what is 2+2?", "--output-format", "json"], api)
    original_id = json.loads(first.stdout)["session_id"]
    (original,) = (tmp_path / "mini-agent-home" / "sessions").rglob(f"*{original_id}.jsonl")
    kept = original.read_bytes()

    forked = run_cli(["-p", "what did I ask?", "--continue", "--fork-session", "--output-format", "stream-json"], api)
    assert forked.returncode == 0, forked.stderr.decode()
    records = [json.loads(line) for line in forked.stdout.decode().splitlines()]
    init, result = records[0], records[-1]
    assert init["session_id"] == result["session_id"] != original_id
    assert init["forked_from"] == result["forked_from"] == original_id
    assert original.read_bytes() == kept
    assert api.message_requests[1]["messages"][0]["content"][0]["text"] == "what is 2+2?"

    again = run_cli(["-p", "and before?", "--resume", original_id], api)  # the original goes on from where it was
    assert again.returncode == 0, again.stderr.decode()
    texts = json.dumps(api.message_requests[2]["messages"])
    assert "what is 2+2?" in texts and "what did I ask?" not in texts


def test_fork_session_needs_a_session_to_fork(run_cli):
    refused = run_cli(["-p", "hello", "--fork-session"])
    assert refused.returncode == 2 and "--fork-session" in refused.stderr.decode()


def test_a_turn_error_on_a_rewound_branch_does_not_mark_the_session_stopped(tmp_path):
    store, path = written_session(tmp_path, ["first", "second"])
    loaded = store.load(path, tmp_path)
    with store.reopen(loaded) as writer:
        writer.write({"type": "turn_error", "kind": "step_limit", "message": "Step limit reached."})
    assert store.list(tmp_path)[0].stopped == "step_limit"
    loaded = store.load(path, tmp_path)
    with store.reopen(loaded) as writer:
        writer.write(rewind_entry(prompts(loaded.journal.entries)[1]))
    assert store.list(tmp_path)[0].stopped == "" and store.load(path, tmp_path).info.stopped == ""


def test_a_fork_of_a_session_whose_turn_is_under_way_elsewhere_never_records_that_turn(tmp_path):
    store, path = written_session(tmp_path)
    loaded = store.load(path, tmp_path)
    with store.reopen(loaded) as running:
        running.write({"type": "changing", "before": "0" * 40})  # the other process is mid-turn
        forked = store.fork(store.load(path, tmp_path), tmp_path, "claude-test")
    assert forked.journal.entries[-1] == {"type": "unchanged"}
    dead = store.fork(store.load(path, tmp_path), tmp_path, "claude-test")  # its process is gone: a kill's turn
    assert dead.journal.entries[-1]["type"] == "changing"
