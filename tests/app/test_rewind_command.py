"""/rewind and /fork in process, as the REPL runs them (app/rewind_command.py): the session's lifecycle and the
one builder, on real files and the real undo, against the loopback model."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.fake_api import answer, tool_use

from mini_agent.app.build import AgentBuilder
from mini_agent.app.lifecycle import SessionLifecycle
from mini_agent.app.rewind_command import BOTH, CONVERSATION, FILES, rewind
from mini_agent.model import AnthropicProvider
from mini_agent.sessions.rewind import prompts


class FrozenClock(datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime(2025, 3, 14, 9, 26, tzinfo=UTC)


@pytest.fixture
def project(tmp_path, monkeypatch):
    # The environment block and the activity lines show times: two runs must see the same ones.
    monkeypatch.setattr("mini_agent.context.keeper.datetime", FrozenClock)
    monkeypatch.setattr("mini_agent.tool_calls.datetime", FrozenClock)
    monkeypatch.setattr("mini_agent.context.call_lines._seconds", lambda seconds: "0.0")
    root = tmp_path / "project"
    root.mkdir()
    (root / "app.py").write_text("print('old')\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "start")
    return root


def git(root: Path, *args: str) -> None:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args]
    subprocess.run(command, cwd=root, check=True, capture_output=True)


class Repl:
    """What the REPL holds: the session's lifecycle and the agent built with it; a turn as the REPL runs one."""

    def __init__(self, api, settings_for, project: Path, resume: str | None = None, data: Path | None = None) -> None:
        data = data or project.parent / "data"
        settings = settings_for(api, permission_mode="auto", cwd=project, data_dir=data, user_dir=data)
        self.sessions = SessionLifecycle(settings, resume)
        provider = AnthropicProvider(settings, sleep=lambda seconds: None)
        self.agent = AgentBuilder(settings, provider, self.sessions)(lambda event: None, lambda request: True)

    def turn(self, api, text: str, *replies) -> list[dict]:
        before = len(api.message_requests)
        api.script(*replies)
        self.sessions.undo.begin_turn()
        try:
            self.agent.run_turn(text)
        finally:
            self.sessions.after_turn()
        return api.message_requests[before:]

    def rewind(self, number: int, scope: str):
        return rewind(self.sessions, self.agent, prompts(self.sessions.current().journal.entries)[number - 1], scope)


FIRST = ("Create notes.txt.", answer(tool_use("write_file", {"path": "notes.txt", "content": "one\n"}, id="w1")))
SECOND = (
    "Rewrite app.py with bash.",
    answer(tool_use("bash", {"command": "echo \"print('new')\" > app.py && echo x > made.txt"}, id="b1")),
)
THIRD = ("Add later.txt.", answer(tool_use("write_file", {"path": "later.txt", "content": "3\n"}, id="w2")))


def three_turns(api, repl: Repl) -> None:
    for text, call in (FIRST, SECOND, THIRD):
        repl.turn(api, text, call, answer(f"Done: {text}"))


def test_rewinding_both_takes_back_the_turns_and_what_they_changed_and_keeps_the_branch_on_disk(
    api, settings_for, project
):
    repl = Repl(api, settings_for, project)
    three_turns(api, repl)
    assert (project / "later.txt").exists() and (project / "made.txt").exists()

    rewound = repl.rewind(2, BOTH)

    assert rewound.typed == SECOND[0]  # back in the input, to edit
    assert (project / "app.py").read_text() == "print('old')\n"
    assert not (project / "made.txt").exists() and not (project / "later.txt").exists()
    assert (project / "notes.txt").read_text() == "one\n"  # the first turn's change stays
    assert any("app.py: undone" in line for line in rewound.lines)
    sent = repl.turn(api, "Rewrite app.py in place instead.", answer("Fine."))[0]
    text = json.dumps(sent)
    assert SECOND[0] not in text and THIRD[0] not in text and "Done: Rewrite" not in text
    assert FIRST[0] in text and "Done: Create notes.txt." in text
    assert sent["messages"][-1]["content"][0]["text"] == "Rewrite app.py in place instead."
    # The file still holds the abandoned branch; a rewind is one more line.
    entries = repl.sessions.current().journal.entries
    typed = [entry["typed"] for entry in entries if "typed" in entry]
    assert typed == [FIRST[0], SECOND[0], THIRD[0], "Rewrite app.py in place instead."]
    assert [e["type"] for e in entries].count("rewind") == 1


def test_rewinding_the_conversation_only_keeps_the_files_and_tells_the_model_which(api, settings_for, project):
    repl = Repl(api, settings_for, project)
    three_turns(api, repl)

    rewound = repl.rewind(2, CONVERSATION)

    assert rewound.typed == SECOND[0]
    assert (project / "app.py").read_text() == "print('new')\n" and (project / "later.txt").exists()
    sent = repl.turn(api, "What now?", answer("Reading again."))[0]
    assert SECOND[0] not in json.dumps(sent)
    told = json.dumps(sent["messages"][-1]["content"])
    assert "rewound the conversation" in told and "app.py" in told and "later.txt" in told
    # The turns taken back can still be undone later: their files are in the stack.
    assert len(repl.sessions.undo.checkpoints) == 3


def test_rewinding_the_files_only_keeps_the_conversation_and_tells_the_model(api, settings_for, project):
    repl = Repl(api, settings_for, project)
    three_turns(api, repl)

    rewound = repl.rewind(3, FILES)

    assert rewound.typed is None
    assert not (project / "later.txt").exists() and (project / "made.txt").exists()
    sent = repl.turn(api, "Go on.", answer("Ok."))[0]
    assert THIRD[0] in json.dumps(sent)  # the conversation is whole
    assert "later.txt" in json.dumps(sent["messages"][-1]["content"]) and "/rewind" in json.dumps(sent)


def test_a_rewound_session_resumed_sends_the_requests_the_rewinding_process_would_have(api, settings_for, project):
    straight = Repl(api, settings_for, project)
    three_turns(api, straight)
    straight.rewind(2, BOTH)
    after = ("Rewrite app.py in place.", answer(tool_use("bash", {"command": "ls"}, id="b2")), answer("Listed."))
    uninterrupted = straight.turn(api, *after)
    git(project, "clean", "-fdq")
    git(project, "checkout", "-q", ".")

    first = Repl(api, settings_for, project)
    three_turns(api, first)
    first.rewind(2, BOTH)
    first.sessions.close()  # the process ends here
    second = Repl(api, settings_for, project, resume=first.sessions.session_id)
    resumed = second.turn(api, *after)

    assert [json.dumps(body) for body in resumed] == [json.dumps(body) for body in uninterrupted]
    assert second.agent.session.messages == straight.agent.session.messages
    # Tokens spent on the abandoned branch still count.
    assert second.agent.session.usage == straight.agent.session.usage


def test_a_one_shot_runs_changes_are_restored_by_a_rewind_after_continue(run_cli, api, settings_for, tmp_path):
    (tmp_path / "app.py").write_text("print('old')\n")
    api.script(
        answer(tool_use("bash", {"command": "echo changed > app.py && touch new.txt"}, id="b1")), answer("Done.")
    )
    assert run_cli(["-p", "change app.py", "--yes"], api).returncode == 0
    assert (tmp_path / "app.py").read_text() == "changed\n"

    repl = Repl(api, settings_for, tmp_path, resume="", data=tmp_path / "mini-agent-home")  # --continue
    rewound = repl.rewind(1, BOTH)
    assert (tmp_path / "app.py").read_text() == "print('old')\n" and not (tmp_path / "new.txt").exists()
    assert rewound.typed == "change app.py"


def test_fork_goes_on_in_a_new_file_and_leaves_the_original_as_it_was(api, settings_for, project):
    repl = Repl(api, settings_for, project)
    repl.turn(api, *FIRST, answer("Created."))
    original = repl.sessions.writer.path
    kept = original.read_bytes()

    message = repl.sessions.fork(repl.agent)

    forked = repl.sessions.session_id
    assert forked != original.name and f"into {forked}" in message
    sent = repl.turn(api, "And now?", answer("Next."))[0]
    assert FIRST[0] in json.dumps(sent)  # the fork continues the same history
    assert original.read_bytes() == kept
    header = json.loads(repl.sessions.writer.path.read_text().splitlines()[0])
    assert header["forked_from"] in original.name and header["id"] == forked


def test_killed_between_restoring_the_files_and_writing_the_rewind_the_session_resumes_told_of_the_undo(
    api, settings_for, project
):
    repl = Repl(api, settings_for, project)
    three_turns(api, repl)
    repl.rewind(2, BOTH)
    repl.sessions.close()
    path = repl.sessions.store.load(repl.sessions.session_id, project).info.path
    whole = path.read_bytes()
    assert json.loads(whole.splitlines()[-1])["type"] == "rewind"
    path.write_bytes(whole[: whole.rstrip(b"\n").rfind(b"\n") + 1])  # the kill came before the rewind line

    resumed = Repl(api, settings_for, project, resume=repl.sessions.session_id)
    sent = resumed.turn(api, "Where are we?", answer("Files went back."))[0]
    assert THIRD[0] in json.dumps(sent)  # the conversation was not rewound
    told = json.dumps(sent["messages"][-1]["content"])
    assert "undid the file changes" in told and "/rewind" in told and "later.txt" in told
    assert not (project / "later.txt").exists()


class Shown:
    """The REPL as the commands see it: its session, its agent, its console (here writing to a string)."""

    def __init__(self, repl: Repl) -> None:
        import io

        from rich.console import Console

        self.sessions, self.agent, self.next_input = repl.sessions, repl.agent, ""
        self.out = io.StringIO()
        self.console = Console(file=self.out, width=200)


def test_the_rewind_command_without_picker_and_a_session_file_that_stopped_being_written(api, settings_for, project):
    from mini_agent.app.rewind_command import fork_command, rewind_command
    from mini_agent.errors import MiniAgentError

    repl = Repl(api, settings_for, project)
    three_turns(api, repl)
    shown = Shown(repl)
    rewind_command(shown, "2 conversation")
    assert shown.next_input == SECOND[0] and "back to before prompt 2" in shown.out.getvalue()
    rewind_command(shown, "9")
    assert "Usage: /rewind [1-1]" in shown.out.getvalue()  # one prompt is left in the conversation

    broken = project.parent / "broken"
    broken.mkdir()
    (broken / "sessions").write_text("not a directory")  # no session file can be written
    failed = Repl(api, settings_for, project, data=broken)
    failed.turn(api, *FIRST, answer("Created."))
    with pytest.raises(MiniAgentError, match="stopped being written"):
        rewind_command(Shown(failed), "1 both")
    with pytest.raises(MiniAgentError, match="stopped being written"):
        fork_command(Shown(failed), "")
    assert (project / "notes.txt").exists()  # nothing was restored


def test_a_turn_whose_process_died_before_it_ended_is_rewound_after_continue(api, settings_for, project):
    repl = Repl(api, settings_for, project)
    repl.turn(api, *FIRST, answer("Created."))
    api.script(*SECOND[1:], answer("Rewritten."))
    repl.sessions.undo.begin_turn()
    repl.agent.run_turn(SECOND[0])  # and the process dies here: no after_turn, no checkpoint logged
    repl.sessions.writer.close()

    resumed = Repl(api, settings_for, project, resume=repl.sessions.session_id)
    assert len(resumed.sessions.undo.checkpoints) == 2  # the cut turn was recorded on the way in
    resumed.rewind(2, FILES)
    assert (project / "app.py").read_text() == "print('old')\n" and not (project / "made.txt").exists()
    assert (project / "notes.txt").exists()
