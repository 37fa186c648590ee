"""The conversation across turns in a real pseudo-terminal against the loopback model: Ctrl-C mid-command and
mid-reply. Instruction files, memory notes, resuming and overflows across turns: tests/app/test_repl_session.py."""

from __future__ import annotations

import json
import re

from support import alive, eventually, process_running
from support.fake_api import answer, tool_use
from support.repl import finish, spawn

PROMPT = "›"


def test_ctrl_c_kills_a_command_and_the_model_hears_how_long_it_ran_and_what_it_printed(api, tmp_path):
    command = "echo started-the-build; exec sleep 60.5151"
    api.script(answer(tool_use("bash", {"command": command}, id="slow")), answer("Understood."))
    child = spawn(api, tmp_path, "--yes")
    child.expect(PROMPT)
    child.sendline("build it")
    sleeper = eventually(lambda: process_running("sleep", "60.5151"), "the command starting")
    child.sendcontrol("c")
    # The command's line stays in the scrollback, with what it printed (the spinner line alone would vanish).
    child.expect("interrupted")
    child.expect("started-the-build")
    child.expect("Interrupted")
    child.expect(PROMPT)
    assert not alive(sleeper)
    child.sendline("why did it stop?")
    child.expect("Understood.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    result = api.message_requests[1]["messages"][2]["content"][0]
    assert result["tool_use_id"] == "slow" and result["is_error"]
    assert re.match(r"Interrupted after \d+(\.\d)? s: the user pressed Ctrl-C", result["content"])
    assert "killed" in result["content"] and "Not run" not in result["content"]
    assert result["content"].endswith("Output so far:\nstarted-the-build")
    session = next((tmp_path / "mini-agent-home" / "sessions").glob("*/*.jsonl"))
    logged = [json.loads(line) for line in session.read_text().splitlines()[1:]]
    stored = [
        b for e in logged if e["type"] == "message" for b in e["message"]["content"] if b.get("type") == "tool_result"
    ]
    assert stored[0]["content"] == result["content"]


def test_a_reply_cut_before_any_text_is_marked_and_the_next_prompt_is_a_message_of_its_own(api, tmp_path):
    slow = answer("Too late.")
    slow.delay = 20  # the model thinks for a long time: Ctrl-C comes before any text
    api.script(slow, answer("Here now."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.sendline("think hard")
    eventually(lambda: api.message_requests, "the request going out")
    child.sendcontrol("c")
    child.expect("Interrupted")
    child.expect(PROMPT)
    child.sendline("never mind")
    child.expect("Here now.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    messages = api.message_requests[1]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "[The user interrupted with Ctrl-C before this reply began.]"}
    ]
    assert messages[2]["content"][0]["text"] == "never mind"
