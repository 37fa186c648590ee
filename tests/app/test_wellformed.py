"""Nothing run by accident, nothing lost: a tool call that did not arrive whole is never run, whatever the stop
reason says; every request stays one the API accepts, whatever came back (file names that are not UTF-8, tool
calls with an input that is not an object or an id used twice, an old session file holding either); and a turn
that ends without an answer is an error in the json result and the exit status.

The loopback model holds every request it receives to the API's rules (request_rules.py); the command, the
tools, the files and the session files are the real ones.
"""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.fake_api import answer, cut_input, tool_use
from support.request_rules import problems

from mini_agent.model.wellformed import repair, safe, safe_text
from mini_agent.sessions import SessionStore

AUTO = ["--permission-mode", "auto", "--output-format", "json"]


def result_of(done) -> dict:
    return json.loads(done.stdout)


def last_results(api, number: int) -> list[dict]:
    """The tool_result blocks of the last message of request `number`."""
    return [b for b in api.message_requests[number]["messages"][-1]["content"] if b["type"] == "tool_result"]


# ---- calls cut short ----------------------------------------------------------------------------------------


def test_a_command_cut_short_is_never_run_though_the_reply_says_tool_use(run_cli, api, tmp_path):
    (tmp_path / "build" / "old").mkdir(parents=True)
    (tmp_path / "build" / "keep.txt").write_text("kept\n")
    call = tool_use("bash", {"command": "rm -rf build/old"}, id="cut_rm")
    # Cut where the guessed completion would be `rm -rf build`: everything the project built.
    api.script(
        cut_input(answer(call, stop_reason="tool_use"), "cut_rm", len('{"command": "rm -rf build')), answer("Ok.")
    )
    done = run_cli(["-p", "clean the old build", *AUTO], api)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "build" / "keep.txt").read_text() == "kept\n" and (tmp_path / "build" / "old").is_dir()
    [told] = last_results(api, 1)
    assert told["tool_use_id"] == "cut_rm" and told["is_error"]
    assert "cut off" in told["content"] and "Send the whole call again" in told["content"]
    assert "rm -rf build" in told["content"]  # what arrived, quoted for the model


@pytest.mark.parametrize("stop_reason", ["tool_use", "end_turn", "stop_sequence"])
def test_a_write_cut_short_writes_nothing_whatever_the_stop_reason(run_cli, api, tmp_path, stop_reason):
    call = tool_use("write_file", {"path": "notes.txt", "content": "line one\nline two\n"}, id="cut_w")
    keep = len('{"path": "notes.txt", "content": "line one')
    api.script(cut_input(answer(call, stop_reason=stop_reason), "cut_w", keep), answer("Ok."))
    done = run_cli(["-p", "write the notes", *AUTO], api)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "notes.txt").exists()
    [told] = last_results(api, 1)
    assert told["is_error"] and "cut off" in told["content"]


def test_an_edit_cut_short_is_not_applied_and_neither_is_the_whole_call_beside_it(run_cli, api, tmp_path):
    target = tmp_path / "app.py"
    target.write_text("x = 1\n")
    edit = tool_use("edit_file", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2  # and more"}, id="e1")
    whole = tool_use("write_file", {"path": "other.txt", "content": "whole\n"}, id="w1")
    cut = cut_input(answer(whole, edit), "e1", len('{"path": "app.py", "old_string": "x = 1", "new_string": "x = 2'))
    api.script(answer(tool_use("read_file", {"path": "app.py"})), cut, answer("Ok."))
    done = run_cli(["-p", "edit it", *AUTO], api)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "x = 1\n" and not (tmp_path / "other.txt").exists()
    results = {b["tool_use_id"]: b for b in last_results(api, 2)}
    assert results["e1"]["is_error"] and "cut off" in results["e1"]["content"]
    assert results["w1"]["is_error"] and "another call of the same reply was cut off" in results["w1"]["content"]


def test_an_input_that_is_not_an_object_is_answered_with_an_error_and_never_stored(run_cli, api, tmp_path):
    call = tool_use("bash", {"command": "touch made"}, id="s1")
    bent = answer(call)
    bent.raw_inputs["s1"] = '"touch made"'  # whole JSON, but a string
    api.script(bent, answer("Ok."))
    done = run_cli(["-p", "go", *AUTO], api)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "made").exists()
    sent = api.message_requests[1]["messages"]
    assert sent[1]["content"][0]["input"] == {}
    [told] = last_results(api, 1)
    assert told["is_error"] and "not a JSON object (str)" in told["content"]


def test_ids_used_twice_get_fresh_ones_in_the_call_and_its_result(run_cli, api, tmp_path):
    (tmp_path / "a.txt").write_text("a\n")
    api.script(
        answer(tool_use("read_file", {"path": "a.txt"}, id="dup")),
        answer(tool_use("read_file", {"path": "a.txt"}, id="dup"), tool_use("bash", {"command": "echo hi"}, id="dup")),
        answer(tool_use("bash", {"command": "echo again"}, id="bad id:0")),
        answer("Ok."),
    )
    done = run_cli(["-p", "read", *AUTO], api)
    assert done.returncode == 0, done.stderr
    messages = api.message_requests[3]["messages"]
    ids = [b["id"] for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert len(ids) == len(set(ids)) == 4 and ids[0] == "dup"
    second = [b["tool_use_id"] for b in messages[4]["content"] if b["type"] == "tool_result"]
    assert second == ids[1:3]
    assert "hi" in messages[4]["content"][1]["content"]  # each result stays with its own call


# ---- text that is not UTF-8 --------------------------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_never_breaks_a_request_and_the_session_continues(run_cli, api, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    with open(os.path.join(os.fsencode(project), b"caf\xff.txt"), "wb") as file:
        file.write(b"x\n")
    api.script(
        answer(tool_use("bash", {"command": "ls"})),
        answer(tool_use("read_file", {"path": "cafe.txt"})),  # not found: the similar names are listed
        answer("There is caf\\xff.txt."),
        answer("Still here."),
    )
    first = run_cli(["-p", "what is here? look at @.", *AUTO], api, cwd=project)
    assert first.returncode == 0, first.stderr
    hint = last_results(api, 2)[0]["content"]
    assert "caf\\xff.txt" in hint  # the byte shown as the escape bash's $'...' quoting reads
    again = run_cli(["-p", "and now?", "--continue", *AUTO], api, cwd=project)
    assert again.returncode == 0, again.stderr
    assert result_of(again)["result"] == "Still here."
    assert "caf\\xff.txt" in api.message_requests[3]["messages"][4]["content"][0]["content"]
    mentioned = api.message_requests[0]["messages"][0]["content"][-1]["text"]
    assert "@. is the directory" in mentioned and "caf\\xff.txt" in mentioned  # the listing of an @ mention


# ---- a stored session the API would reject back ------------------------------------------------------------


def test_an_old_session_file_with_bad_text_and_bad_calls_is_repaired_on_load(run_cli, api, tmp_path):
    writer = SessionStore(tmp_path / "mini-agent-home").create(tmp_path, "claude-test")
    call = {"type": "tool_use", "name": "bash"}
    entries = [
        {"role": "user", "content": [{"type": "text", "text": "list caf\udcff"}]},
        {"role": "assistant", "content": [{**call, "id": "t1", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "caf\udcff.txt"}]},
        {"role": "assistant", "content": [{**call, "id": "t1", "input": "ls"}, {**call, "id": "t2", "input": {}}]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "error", "is_error": True}],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done \ud800."}]},
    ]
    for number, message in enumerate(entries):
        writer.write({"type": "message", **({"typed": "list"} if number == 0 else {}), "message": message})
    writer.close()
    api.script(answer("Continued."))
    done = run_cli(["-p", "go on", "--continue", *AUTO], api)
    assert done.returncode == 0, done.stderr
    sent = api.message_requests[0]["messages"]
    assert sent[0]["content"][0]["text"] == "list caf\\xff" and sent[2]["content"][0]["content"] == "caf\\xff.txt"
    renamed = sent[3]["content"][0]
    assert renamed["id"] != "t1" and renamed["input"] == {}
    assert [b["tool_use_id"] for b in sent[4]["content"] if b["type"] == "tool_result"] == [renamed["id"], "t2"]
    assert sent[5]["content"][0]["text"] == "Done \ufffd."


# ---- a turn that ends without an answer --------------------------------------------------------------------


def test_a_reply_cut_at_the_output_limit_is_an_error_in_json_and_the_exit_status(run_cli, api):
    api.script(answer("The first half of", stop_reason="max_tokens"))
    done = run_cli(["-p", "write", "--output-format", "json"], api)
    result = result_of(done)
    assert done.returncode == 1 and result["is_error"] and result["exit_code"] == 1
    assert "output limit" in result["error"] and result["stop_reason"] == "max_tokens"


@pytest.mark.parametrize("output_format", ["json", "text"])
def test_an_empty_reply_is_an_error_not_silence(run_cli, api, output_format):
    api.script(answer())
    done = run_cli(["-p", "answer me", "--output-format", output_format], api)
    assert done.returncode == 1
    if output_format == "json":
        assert "empty reply" in result_of(done)["error"]
    else:
        assert "empty reply" in done.stderr.decode()


# ---- the pieces, over any input ----------------------------------------------------------------------------

TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=20) | st.binary(max_size=12).map(
    lambda data: data.decode("utf-8", "surrogateescape")
)


@given(TEXT)
def test_safe_text_always_encodes_and_keeps_valid_text_as_it_is(value):
    cleaned = safe_text(value)
    cleaned.encode("utf-8")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return
    assert cleaned == value and safe(value) is value


CALL_IDS = st.sampled_from(["t1", "t2", "bad id", ""])
INPUTS = st.one_of(st.just({}), st.just({"command": "ls"}), st.just("ls"), st.just([1]), st.none())
CALL = st.builds(lambda i, x: {"type": "tool_use", "id": i, "name": "bash", "input": x}, CALL_IDS, INPUTS)
RESULT = st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, CALL_IDS)


@st.composite
def conversations(draw):
    messages = [{"role": "user", "content": [{"type": "text", "text": draw(TEXT).strip() or "hi"}]}]
    for _ in range(draw(st.integers(0, 4))):
        messages.append({"role": "assistant", "content": draw(st.lists(CALL, min_size=1, max_size=3))})
        results = draw(st.lists(RESULT, max_size=4))
        messages.append({"role": "user", "content": results or [{"type": "text", "text": "next"}]})
    return messages


@given(conversations())
def test_any_stored_conversation_is_repaired_into_a_valid_request(messages):
    repaired = repair(messages)
    body = {"model": "m", "max_tokens": 10, "messages": repaired}
    assert problems(body) == []
    assert repair(repaired) is repaired  # repaired once, nothing left to repair
