"""stream-json for scripts written for `claude -p --output-format stream-json --verbose`, and
`--input-format stream-json`: user messages as JSON lines on stdin, each a turn of one session.

The run is the command in process (run_cli) against the loopback model; its stdout is read the way a Claude Code
script reads it: `system`/`init` first, `assistant` records carrying the API message, `user` records carrying
the tool results, a `result` per turn.
"""

from __future__ import annotations

import base64
import io
import json

from support.fake_api import answer, tool_use


def records(done) -> list[dict]:
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def read_like_claude_code_script(lines: list[dict]) -> dict:
    """What a script written for Claude Code's stream takes from it, asserting the shapes it relies on."""
    init, *rest = lines
    assert init["type"] == "system" and init["subtype"] == "init"
    session = init["session_id"]
    assert isinstance(session, str) and session
    assert isinstance(init["tools"], list) and all(isinstance(name, str) for name in init["tools"])
    assert isinstance(init["mcp_servers"], list) and isinstance(init["cwd"], str) and init["model"]
    assert init["permissionMode"] in ("default", "acceptEdits", "bypassPermissions", "plan", "auto")
    assert isinstance(init["apiKeySource"], str)
    taken: dict = {"calls": {}, "results": {}, "texts": [], "final": None}
    for record in rest:
        if record["type"] == "assistant":
            message = record["message"]
            assert record["session_id"] == session and record["parent_tool_use_id"] is None
            assert message["role"] == "assistant" and message["type"] == "message" and message["id"]
            assert message["model"] and isinstance(message["usage"]["output_tokens"], int)
            for block in message["content"]:
                if block["type"] == "tool_use":
                    taken["calls"][block["id"]] = (block["name"], block["input"])
                elif block["type"] == "text":
                    taken["texts"].append(block["text"])
        elif record["type"] == "user":
            assert record["session_id"] == session and record["parent_tool_use_id"] is None
            assert record["message"]["role"] == "user"
            for block in record["message"]["content"]:
                assert block["type"] == "tool_result" and block["tool_use_id"] in taken["calls"]
                taken["results"][block["tool_use_id"]] = (block["content"], block["is_error"])
        elif record["type"] == "result":
            assert record["session_id"] == session
            for key in ("subtype", "is_error", "result", "duration_ms", "num_turns", "total_cost_usd", "usage"):
                assert key in record
            taken["final"] = record
    return taken


def test_a_claude_code_script_reads_the_stream(run_cli, api, tmp_path):
    (tmp_path / "notes.txt").write_text("the notes\n")
    api.script(
        answer("Reading.", tool_use("read_file", {"path": "notes.txt"}, id="toolu_r1")), answer("It says notes.")
    )
    done = run_cli(["-p", "read it", "--output-format", "stream-json", "--verbose"], api)
    assert done.returncode == 0, done.stderr.decode()
    lines = records(done)
    taken = read_like_claude_code_script(lines)
    assert taken["calls"] == {"toolu_r1": ("read_file", {"path": "notes.txt"})}
    content, is_error = taken["results"]["toolu_r1"]
    assert "the notes" in content and not is_error
    assert taken["texts"] == ["Reading.", "It says notes."]
    final = taken["final"]
    assert final is lines[-1] and final["subtype"] == "success" and final["result"] == "It says notes."
    # mini-agent's own records are still there, in their places
    kinds = [record["type"] for record in lines]
    assert kinds.index("tool_call") < kinds.index("user") < kinds.index("tool_result")
    assert lines[0]["apiKeySource"] == "ANTHROPIC_API_KEY" and lines[0]["permission_mode"] == "default"


def stream_in(run_cli, api, lines: list[str], *args: str):
    return run_cli(
        ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", *args],
        api,
        input="".join(line + "\n" for line in lines),
    )


def user(content) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}})


def test_each_stdin_message_is_a_turn_of_one_session_with_a_result_each(run_cli, api):
    api.script(answer("First answer."), answer("Second answer."))
    done = stream_in(run_cli, api, [user("first question"), user([{"type": "text", "text": "second question"}])])
    assert done.returncode == 0, done.stderr.decode()
    lines = records(done)
    results = [record for record in lines if record["type"] == "result"]
    assert [r["result"] for r in results] == ["First answer.", "Second answer."]
    assert len({r["session_id"] for r in results}) == 1 and [r["type"] for r in lines].count("system") == 1
    second = api.message_requests[1]["messages"]
    said = json.dumps(second)
    assert "first question" in said and "First answer." in said and "second question" in said  # one conversation
    read_like_claude_code_script(lines)


def test_a_malformed_line_is_answered_with_an_error_result_and_the_session_goes_on(run_cli, api):
    api.script(answer("Still here."))
    bad = ["{not json", json.dumps({"type": "assistant", "message": {}}), user([{"type": "document"}]), user("")]
    done = stream_in(run_cli, api, [*bad, user("are you there?")])
    assert done.returncode == 0, done.stderr.decode()
    results = [record for record in records(done) if record["type"] == "result"]
    assert len(results) == 5 and results[-1]["result"] == "Still here." and not results[-1]["is_error"]
    errors = [r["error"] for r in results[:4]]
    assert all(r["is_error"] and r["exit_code"] == 2 for r in results[:4])
    assert errors[0].startswith("stdin line 1: not JSON") and "only user messages" in errors[1]
    assert "'document'" in errors[2] and "empty" in errors[3]
    assert len(api.message_requests) == 1


def test_the_exit_status_is_the_last_turn_s(run_cli, api):
    api.script(
        answer("ok"),
        answer("Will write.", tool_use("write_file", {"path": "x.txt", "content": "x"})),
        answer("Could not."),
    )
    done = stream_in(run_cli, api, [user("hello"), user("write x.txt")])
    assert done.returncode == 4  # the last turn's call was refused: nobody can be asked on a data stream
    results = [record for record in records(done) if record["type"] == "result"]
    assert [r["exit_code"] for r in results] == [0, 4] and results[1]["permission_denials"]


def test_an_image_block_is_attached_to_its_turn(run_cli, api):
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (4, 3), "red").save(png, "PNG")
    data = base64.b64encode(png.getvalue()).decode()
    api.script(answer("A red dot."))
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}
    done = stream_in(run_cli, api, [user([{"type": "text", "text": "what is this?"}, image])])
    assert done.returncode == 0, done.stderr.decode()
    sent = api.message_requests[0]["messages"][-1]["content"]
    assert any(block.get("type") == "image" for block in sent)


def test_stream_json_input_needs_stream_json_output(run_cli, api):
    done = run_cli(["-p", "--input-format", "stream-json"], api, input=user("hi") + "\n")
    assert done.returncode == 2 and "--output-format stream-json" in done.stderr.decode()
    assert not api.message_requests


def test_no_message_on_stdin_is_a_usage_error(run_cli, api):
    done = stream_in(run_cli, api, [])
    assert done.returncode == 2 and "no user message" in done.stderr.decode()
    assert records(done)[0]["type"] == "system"


def test_a_control_request_is_answered_and_is_no_turn(run_cli, api):
    api.script(answer("Hi."))
    interrupt = json.dumps({"type": "control_request", "request_id": "req_1", "request": {"subtype": "interrupt"}})
    other = json.dumps({"type": "control_request", "request_id": "req_2", "request": {"subtype": "set_model"}})
    done = stream_in(run_cli, api, [interrupt, other, user("hello")])
    assert done.returncode == 0, done.stderr.decode()
    lines = records(done)
    answers = [record["response"] for record in lines if record["type"] == "control_response"]
    assert [(a["request_id"], a["subtype"]) for a in answers] == [("req_1", "success"), ("req_2", "error")]
    assert "SIGINT" in answers[1]["error"]
    assert [record["result"] for record in lines if record["type"] == "result"] == ["Hi."]
