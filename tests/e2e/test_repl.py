"""The full REPL in a real pseudo-terminal against the loopback model: a developer's session with its keys (the
one-key approval, Esc Enter, Shift+Tab, Tab, Ctrl-C) and the session picker on the terminal. The same commands
without a terminal: tests/app/test_repl_session.py."""

from __future__ import annotations

from support.fake_api import answer, tool_use
from support.repl import finish, spawn

PROMPT = "›"


def typed_turns(request: dict) -> list[str]:
    return [
        message["content"][0]["text"]
        for message in request["messages"]
        if message["role"] == "user" and message["content"] and message["content"][0].get("type") == "text"
    ]


def test_a_session_answer_edit_undo_context_cost_and_continue(api, tmp_path):
    target = tmp_path / "app.py"
    target.write_text("print('old')\n")
    api.script(
        answer("# Plan\n\nI will **change** the greeting.\n\n- read it\n- edit it\n"),
        answer(tool_use("read_file", {"path": "app.py"})),
        answer(tool_use("edit_file", {"path": "app.py", "old_string": "old", "new_string": "new"})),
        answer("Changed it."),
        answer("Noted, it is back to old."),
    )
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.sendline("what will you do?")
    child.expect("Plan")
    child.expect("change")
    child.expect("read it")
    child.expect(PROMPT)
    child.sendline("now change the greeting")
    child.expect("needs your approval")
    child.expect(r"-print\('old'\)")
    child.expect(r"\+print\('new'\)")
    child.expect(r"Allow\? ")
    child.send("y")  # one key, no Enter
    child.expect("Changed it.")
    child.expect("cached")  # the status line after the turn
    child.expect(PROMPT)
    assert target.read_text() == "print('new')\n"
    child.sendline("/undo")
    child.expect("app.py: undone")
    child.expect(PROMPT)
    assert target.read_text() == "print('old')\n"
    child.sendline("/context")
    child.expect(r"of 200,000 tokens")
    child.expect(r"tool schemas\s+[\d,]+")
    child.expect(r"free space\s+[\d,]+")
    child.expect(r"window of 200,000 tokens is from the default: the endpoint did not say")
    child.expect(PROMPT)
    child.sendline("/cost")
    child.expect(r"input [\d,]+ · output [\d,]+")
    child.expect(PROMPT)
    child.sendline("did it work?")
    child.expect("Noted, it is back to old.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    after_undo = api.message_requests[4]["messages"][-1]["content"]
    assert any('type="undo"' in block.get("text", "") and "app.py" in block.get("text", "") for block in after_undo)


def test_ctrl_c_while_the_answer_streams_returns_to_a_working_prompt(api, tmp_path):
    long_answer = answer(" ".join(f"word{i}" for i in range(400)))
    long_answer.event_delay = 0.05
    api.script(long_answer, answer("Still here."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.sendline("talk a lot")
    child.expect("word3")
    child.sendcontrol("c")
    child.expect("Interrupted")
    child.expect(PROMPT)
    child.sendline("are you there?")
    child.expect("Still here.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    cut, last = api.message_requests[1]["messages"][-2:]  # the cut reply stays, and a new user message follows
    assert cut["role"] == "assistant" and len(cut["content"]) == 1
    assert cut["content"][0]["text"].startswith("word0 word1 word2 word3")
    assert cut["content"][0]["text"].endswith("[The user interrupted this reply with Ctrl-C; it was cut here.]")
    typed = [block["text"] for block in last["content"] if not block["text"].startswith("<context")]
    assert last["role"] == "user" and typed == ["are you there?"]


def test_multi_line_input_mode_cycling_completion_and_suggestions(api, tmp_path):
    api.script(answer("Two lines received."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.send("first line")
    child.send("\x1b\r")  # Esc, Enter: a newline, not a send
    child.send("second line\r")
    child.expect("Two lines received.")
    child.expect(PROMPT)
    child.send("\x1b[Z")  # Shift+Tab
    child.expect(r"\[accept-edits\]")
    child.send("\x1b[Z")  # towards auto: the first time, the prompt asks
    child.expect(r"Switch to auto\?")
    child.send("x")  # any other key: stay, and the key is not typed
    child.expect(r"\[accept-edits\]")
    child.sendline("/mode")
    child.expect("mode accept-edits")
    child.expect(PROMPT)
    child.send("\x1b[Z")
    child.expect(r"Switch to auto\?")
    child.send("y")
    child.expect(r"\[auto\]")
    child.sendline("/mode")
    child.expect("mode auto")
    child.expect(PROMPT)
    child.send("\x1b[Z\x1b[Z\x1b[Z\x1b[Z")  # plan, default, accept-edits, auto: confirmed once, not asked again
    child.sendline("/mode")
    child.expect("mode auto")
    child.expect(PROMPT)
    child.send("/cos\t")
    child.expect("/cost")
    child.send("\r")
    child.expect(r"input \d+ · output \d+")
    child.expect(PROMPT)
    child.sendline("/comapct")
    child.expect("Unknown command /comapct. Did you mean /compact?")
    child.expect(PROMPT)
    child.sendline("/help")
    child.expect("/undo")
    child.expect("Shift\\+Tab cycles the mode")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    assert typed_turns(api.message_requests[0]) == ["first line\nsecond line"]
    # Someone is there to answer: the REPL's model is not told to act without asking.
    assert "non_interactive" not in " ".join(block["text"] for block in api.message_requests[0]["system"])


def test_resume_without_an_id_lists_the_sessions_and_continues_the_one_picked(run_cli, api, tmp_path):
    api.script(answer("First."), answer("Second."), answer("Picked the first."))
    for text in ("the first task", "the second task"):
        assert run_cli(["-p", text], api).returncode == 0
    child = spawn(api, tmp_path, "--resume")
    child.expect(r"1\. .*the second task")  # newest first
    child.expect(r"2\. .*the first task")
    child.expect(r"Session number")
    child.sendline("2")
    child.expect("Continuing session")
    child.expect(PROMPT)
    child.sendline("go on")
    child.expect("Picked the first.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    assert typed_turns(api.message_requests[-1]) == ["the first task", "go on"]


def test_continue_prints_its_session_above_the_first_prompt_and_keeps_what_is_typed(run_cli, api, tmp_path):
    """--continue reads its session behind the prompt and prints the notice above it once read: what was typed
    meanwhile stays in the prompt, drawn again below the notice (app/resumed_notice.py)."""
    api.script(answer("First."), answer("Going on."))
    assert run_cli(["-p", "the first task"], api).returncode == 0
    child = spawn(api, tmp_path, "--continue")
    child.expect("mode default")  # the banner, then the prompt
    child.send("go")  # before the notice, or after it: kept either way
    child.expect("Continuing session")
    child.expect("the first task")
    child.expect(PROMPT)
    child.send(" on\r")
    child.expect("Going on.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    assert typed_turns(api.message_requests[-1]) == ["the first task", "go on"]


def test_continue_refuses_a_session_another_process_has_open_after_drawing_its_prompt(api, tmp_path):
    """The session is read behind the prompt: a session that cannot be continued ends the REPL with the error, as
    the start did before the read moved behind the prompt, and nothing is sent."""
    api.script(answer("First."))
    holder = spawn(api, tmp_path)
    holder.expect(PROMPT)
    holder.sendline("the first task")
    holder.expect("First.")
    holder.expect(PROMPT)  # its session file is open, and stays open while it runs
    child = spawn(api, tmp_path, "--continue")
    child.expect("open in another mini-agent process")
    assert finish(child) != 0
    holder.sendcontrol("d")
    assert finish(holder) == 0
    assert len(api.message_requests) == 1
