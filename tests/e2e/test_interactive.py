"""The installed command in a real pseudo-terminal: Ctrl-C in a turn, approval with a diff, what the terminal shows
of each request, the prompt drawn before the build. The loop's behaviour without a terminal:
tests/app/test_repl_session.py."""

from __future__ import annotations

import re

import pexpect
import pytest
from support import alive, eventually, process_running, script_an_edit_to_approve
from support.fake_api import answer, tool_use
from support.repl import finish, spawn


def test_ctrl_c_during_a_command_returns_to_the_prompt_with_the_session_intact(api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "exec sleep 60.4343"}, id="slow")), answer("Still here."))
    child = spawn(api, tmp_path, "--yes")
    child.expect("›")
    child.sendline("run something slow")
    # Run in the sandbox: found by its argv, since `$$` is the namespace's own pid.
    sleeper = eventually(lambda: process_running("sleep", "60.4343"), "the command starting")
    child.sendcontrol("c")
    child.expect("Interrupted")
    child.expect("›")
    assert not alive(sleeper)
    child.sendline("are you there?")
    child.expect("Still here.")
    child.expect("›")
    child.sendcontrol("d")
    assert finish(child) == 0
    results = api.message_requests[1]["messages"][2]["content"]
    assert results[0]["tool_use_id"] == "slow" and results[0]["is_error"]
    assert re.match(r"Interrupted after \d+(\.\d)? s: the user pressed Ctrl-C", results[0]["content"])
    typed = [b for b in results[1:] if not b.get("text", "").startswith("<context ")]  # a new minute re-sends the time
    assert [(b["type"], b.get("text")) for b in typed] == [("text", "are you there?")]


@pytest.mark.parametrize(("reply", "expected"), [("y", "new line\n"), ("n", "old line\n")])
def test_with_a_terminal_an_edit_shows_its_diff_and_waits_for_an_answer(api, tmp_path, reply, expected):
    target = script_an_edit_to_approve(api, tmp_path)
    child = spawn(api, tmp_path, "-p", "change the line")
    child.expect("needs your approval")
    child.expect("-old line")
    child.expect(r"\+new line")
    child.expect(r"Allow\? \[y/n/e\]")
    child.send(reply)
    if reply == "n":
        child.send("\r")  # no words for the model
    child.expect("Done.")
    assert finish(child) == (0 if reply == "y" else 4)  # 4: the human refused the edit
    assert target.read_text() == expected
    result = api.message_requests[2]["messages"][-1]["content"][0]
    assert result.get("is_error", False) == (reply == "n")
    if reply == "n":
        assert "declined" in result["content"]


def test_each_request_is_set_apart_in_the_scrollback(api, tmp_path):
    api.script(answer("Hello there."), answer("Second."))
    child = spawn(api, tmp_path)
    sgr = r"(?:\x1b\[[0-9;]*m)*"
    child.expect("›")
    child.sendline("say hi")
    # the input is printed again in bold behind the marker, on a line of its own, and a blank line follows
    child.expect(rf"\x1b\[1m› {sgr}say hi{sgr}\r\n\r\n")
    child.expect("Hello there.")
    child.expect("›")
    child.sendline("and again")
    child.expect(rf"\x1b\[1m› {sgr}and again{sgr}\r\n\r\n")
    child.expect("Second.")
    child.expect("›")
    child.sendeof()
    assert finish(child) == 0


def test_the_prompt_comes_before_the_agent_is_built_and_what_the_build_reports_waits_for_it(api, tmp_path):
    agents = tmp_path / ".mini-agent" / "agents"
    agents.mkdir(parents=True)
    (agents / "odd.md").write_text("---\ndescription: odd one\ntools: [read_file, no_such_tool]\n---\nBe odd.\n")
    api.script(answer("Built and answering."))
    # Cold: the subject is the start-up of a fresh process (the prompt must not wait for the SDK's import and the
    # build), which a warm worker has done before it forks; and so the cold REPL path stays covered.
    child = spawn(api, tmp_path, cold=True)
    child.expect("›")
    assert "no_such_tool" not in child.before, "the prompt waited for the agent's build"
    # The build behind the prompt is over within this second; its notice must not be drawn over the prompt.
    assert child.expect(["no_such_tool", pexpect.TIMEOUT], timeout=1.0) == 1
    child.sendline("/mode")
    child.expect("mode default")
    shown_before = child.before
    assert "no_such_tool" in shown_before, "held until the prompt returned, then shown before the command's output"
    child.expect("›")
    child.sendline("hello")
    child.expect("Built and answering.")
    child.expect("›")
    child.sendcontrol("d")
    assert finish(child) == 0
    names = [tool["name"] for tool in api.message_requests[0]["tools"]]
    assert "read_file" in names and "task" in names
