"""Sessions from the command line: every run is saved, --continue and --resume pick one up."""

from __future__ import annotations

import json

from support.fake_api import answer, failure, tool_use


def test_a_one_shot_run_is_saved_and_continued_with_its_history(run_cli, api, tmp_path):
    api.script(answer("The answer is 4."), answer("You asked about 2+2."))
    first = run_cli(["-p", "what is 2+2?", "--output-format", "json"], api)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    files = list((tmp_path / "mini-agent-home" / "sessions").rglob("*.jsonl"))
    assert len(files) == 1 and session_id in files[0].name
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert lines[0]["type"] == "session" and any(entry.get("typed") == "what is 2+2?" for entry in lines)

    second = run_cli(["-p", "what did I ask?", "--continue"], api)
    assert second.returncode == 0, second.stderr
    assert "Continuing session" in second.stderr.decode()
    messages = api.message_requests[1]["messages"]
    assert messages[0]["content"][0]["text"] == "what is 2+2?"
    assert messages[1]["content"][0]["text"] == "The answer is 4."
    assert messages[2]["content"][0]["text"] == "what did I ask?"
    assert len(list((tmp_path / "mini-agent-home" / "sessions").rglob("*.jsonl"))) == 1  # the same file goes on


def test_resume_by_id_and_without_a_terminal_to_pick(run_cli, api, tmp_path):
    api.script(answer("One."), answer("Two."), answer("Resumed."))
    ids = [
        json.loads(run_cli(["-p", text, "--output-format", "json"], api).stdout)["session_id"]
        for text in ("first task", "second task")
    ]
    done = run_cli(["-p", "go on", "--resume", ids[0]], api)
    assert done.returncode == 0, done.stderr
    assert api.message_requests[2]["messages"][0]["content"][0]["text"] == "first task"
    picked = run_cli(["-p", "go on", "--resume"], api)
    assert picked.returncode == 2 and "--resume ID" in picked.stderr.decode()
    unknown = run_cli(["-p", "go on", "--resume", "ffffffff"], api)
    assert unknown.returncode == 2 and "ffffffff" in unknown.stderr.decode()
    both = run_cli(["-p", "x", "--continue", "--resume", ids[0]], api)
    assert both.returncode == 2


def test_a_damaged_session_file_is_read_up_to_the_damage_with_a_notice(run_cli, api, tmp_path):
    api.script(answer("Saved."), answer("Still works."))
    run_cli(["-p", "remember the word tangerine"], api)
    (path,) = (tmp_path / "mini-agent-home" / "sessions").rglob("*.jsonl")
    with path.open("a") as file:
        file.write('{"type": "message", "message": {"role": "user", "cont')  # a crash mid-line
    done = run_cli(["-p", "what word?", "--continue"], api)
    assert done.returncode == 0, done.stderr
    assert "damaged" in done.stderr.decode()
    assert api.message_requests[1]["messages"][0]["content"][0]["text"] == "remember the word tangerine"


def test_a_session_file_that_cannot_be_written_warns_and_the_run_goes_on(run_cli, api, tmp_path):
    home = tmp_path / "mini-agent-home"
    home.mkdir(exist_ok=True)
    (home / "sessions").write_text("not a directory")
    api.script(answer("Answered anyway."))
    done = run_cli(["-p", "hello"], api)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == "Answered anyway.\n"
    assert "could not be written" in done.stderr.decode() and "not be resumable" in done.stderr.decode()


def session_entries(tmp_path) -> list[dict]:
    (path,) = (tmp_path / "mini-agent-home" / "sessions").rglob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def test_an_api_failure_that_ends_the_turn_is_in_the_session_file_and_continue_says_why(run_cli, api, tmp_path):
    api.script(*[failure(500, "api_error", "the model server broke") for _ in range(3)], answer("Back."))
    failed = run_cli(["-p", "do the thing"], api)
    assert failed.returncode == 1
    errors = [entry for entry in session_entries(tmp_path) if entry["type"] == "turn_error"]
    assert len(errors) == 1 and errors[0]["kind"] == "api" and "the model server broke" in errors[0]["message"]

    again = run_cli(["-p", "try again", "--continue"], api)
    assert again.returncode == 0, again.stderr
    said = again.stderr.decode()
    assert "› do the thing" in said and "The turn stopped: " in said and "the model server broke" in said


def test_a_step_limit_is_recorded_and_the_listing_marks_a_run_that_stopped_without_an_answer(run_cli, api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "true"})), answer("Fine."))
    stopped = run_cli(["-p", "loop forever", "--max-steps", "1", "--yes"], api)
    assert stopped.returncode == 3
    (error,) = [entry for entry in session_entries(tmp_path) if entry["type"] == "turn_error"]
    assert error["kind"] == "step_limit" and "--max-steps" in error["message"]
    assert run_cli(["-p", "a good one"], api).returncode == 0

    from mini_agent.app.lifecycle import listing
    from mini_agent.sessions import SessionStore

    lines = listing(SessionStore(tmp_path / "mini-agent-home").list(tmp_path))
    assert lines[0].endswith("a good one") and "[stopped" not in lines[0]
    assert lines[1].endswith("[stopped: the step limit was reached] loop forever")
