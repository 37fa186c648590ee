"""Asking the human: what the question shows, how answers are read, "always" answers, Ctrl-C at the question."""

from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

import pytest
from fake_api import answer, tool_use
from test_interactive import finish, spawn

from mini_agent.safety.gate import ApprovalRequest
from mini_agent.safety.permissions import Allow, Ask, Deny, Grant
from mini_agent.safety.rules import Rule
from mini_agent.tools import default_tools
from mini_agent.ui.confirm import ask_on_terminal, interpret

TOOLS = {tool.name: tool for tool in default_tools()}
EXACT = Grant("a", "always allow `npm test`", (Rule("allow", "bash", "npm test"),))
PREFIX = Grant("p", "always allow `npm *`", (Rule("allow", "bash", "npm *"),))


def request(tool="bash", arguments=None, grants=(EXACT, PREFIX), risk="ordinary", preview=None) -> ApprovalRequest:
    ask = Ask("not on the read-only list", risk, grants, "ordinary: not on the read-only list")
    return ApprovalRequest(TOOLS[tool], arguments or {"command": "npm test"}, ask, preview)


@pytest.mark.parametrize(
    ("line", "kind", "detail"),
    [
        ("y", Allow, ()),
        ("Yes", Allow, ()),
        ("yes, go ahead", Allow, ()),
        ("a", Allow, (Rule("allow", "bash", "npm test"),)),
        ("p", Allow, (Rule("allow", "bash", "npm *"),)),
        ("", Deny, "Ask them how they want to proceed"),
        ("n", Deny, "Ask them how they want to proceed"),
        ("n use make test instead", Deny, "Their message: use make test instead"),
        ("no, run the linter first", Deny, "Their message: run the linter first"),
        ("please use pytest", Deny, "Their message: please use pytest"),
        ("e", Deny, "Their message: e"),
    ],
)
def test_answers(line, kind, detail):
    decision = interpret(line, request())
    assert isinstance(decision, kind)
    if kind is Allow:
        assert decision.remember == detail
    else:
        assert detail in decision.message and not decision.stop_turn


def test_the_question_shows_the_command_its_class_and_the_answers():
    err = io.StringIO()
    confirm = ask_on_terminal(err, read_line=lambda prompt: err.write(prompt) and "n")
    assert isinstance(confirm(request()), Deny)
    shown = err.getvalue()
    assert "bash(npm test) needs your approval" in shown and "$ npm test" in shown
    assert "class: ordinary: not on the read-only list" in shown
    assert "a always allow `npm test`" in shown and "p always allow `npm *`" in shown
    assert "Allow? [y/n/a/p]" in shown and "\x1b[" not in shown  # not a terminal: no colour


def test_an_edit_question_shows_the_diff_and_no_raw_content():
    err = io.StringIO()
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new\n"
    grants = (Grant("e", "always allow edits to x.py", ()),)
    arguments = {"path": "x.py", "old_string": "old", "new_string": "new"}
    ask_on_terminal(err, read_line=lambda prompt: "y")(request("edit_file", arguments, grants, preview=diff))
    shown = err.getvalue()
    assert "-old" in shown and "+new" in shown and '"path": "x.py"' in shown and "old_string" not in shown


def test_ctrl_c_at_the_question_is_no_and_ends_the_turn():
    def interrupted(prompt):
        raise KeyboardInterrupt

    decision = ask_on_terminal(io.StringIO(), read_line=interrupted)(request())
    assert isinstance(decision, Deny) and decision.stop_turn


def test_in_a_terminal_a_refusal_with_words_reaches_the_model(api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "touch made.txt"})), answer("Understood."))
    child = spawn(api, tmp_path, "-p", "make the file")
    child.expect(r"\$ touch made.txt")
    child.expect("class: ordinary")
    child.expect(r"Allow\? \[y/n/a/p\]")
    child.sendline("n use the Makefile instead")
    child.expect("Understood.")
    assert finish(child) == 0
    result = api.message_requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] and "Their message: use the Makefile instead" in result["content"]
    assert not (tmp_path / "made.txt").exists()


def test_in_a_terminal_always_allowing_edits_to_a_file_stops_the_questions_for_it(api, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("one\n")
    api.script(
        answer(tool_use("read_file", {"path": "notes.txt"})),
        answer(tool_use("edit_file", {"path": "notes.txt", "old_string": "one", "new_string": "two"})),
        answer(tool_use("edit_file", {"path": "notes.txt", "old_string": "two", "new_string": "three"})),
        answer(tool_use("write_file", {"path": "other.txt", "content": "x"})),
        answer("Edited."),
    )
    child = spawn(api, tmp_path, "-p", "edit it twice")
    child.expect(r"Allow\? \[y/n/e\]")
    child.sendline("e")
    child.expect(r"write_file\(other.txt\) needs your approval")  # the next question is for the other file
    child.sendline("n")
    child.expect("Edited.")
    assert finish(child) == 0
    assert target.read_text() == "three\n" and not (tmp_path / "other.txt").exists()
    assert child.before.count("needs your approval") == 0


def test_in_a_terminal_ctrl_c_at_the_question_ends_the_run_and_changes_nothing(api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "touch made.txt"})))
    child = spawn(api, tmp_path, "-p", "make the file")
    child.expect(r"Allow\? ")
    child.sendcontrol("c")
    child.expect("Interrupted")
    assert finish(child) == 130
    assert not (tmp_path / "made.txt").exists()


def test_in_a_terminal_a_yes_runs_a_blocked_command_outside_the_sandbox(api, tmp_path):
    """Auto mode: the sandbox blocks a write outside the project; the model asks to leave it; the human says yes."""
    from mini_agent.safety.sandbox import mechanism

    if mechanism() is None:
        pytest.skip("no OS sandbox on this machine")
    # Outside /tmp: the workspace-write sandbox lets commands write in the temp dirs.
    cache = Path.home() / ".cache" / "mini-agent-tests"
    cache.mkdir(parents=True, exist_ok=True)
    outside = Path(tempfile.mkdtemp(prefix="outside-", dir=cache))
    try:
        (tmp_path / "tool.py").write_text("import sys\nopen(sys.argv[1], 'w').write('made')\n")
        command = f"python3 tool.py {outside}/made"
        api.script(
            answer(tool_use("bash", {"command": command}, id="first")),
            answer(tool_use("bash", {"command": command, "outside_sandbox": True}, id="second")),
            answer("Written."),
        )
        child = spawn(api, tmp_path, "-p", "write it", "--permission-mode", "auto")
        child.expect("runs outside the sandbox")
        child.expect(r"Allow\? \[y/n/a\]")
        assert not (outside / "made").exists()  # the first, sandboxed try was blocked
        child.sendline("y")
        child.expect("Written.")
        assert finish(child) == 0
        first = api.message_requests[1]["messages"][-1]["content"][0]["content"]
        assert '<system_hint type="sandbox"' in first and "outside_sandbox" in first
        assert (outside / "made").read_text() == "made"
    finally:
        shutil.rmtree(outside, ignore_errors=True)
