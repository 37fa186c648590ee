"""Asking the human: what the question shows, how answers are read, "always" answers, Ctrl-C at the question."""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from support import ScriptedKeys
from support.fake_api import answer, tool_use
from support.repl import finish, spawn

from mini_agent.gate import ApprovalRequest
from mini_agent.safety.permissions import Allow, Ask, Deny, Grant
from mini_agent.safety.rules import Rule
from mini_agent.tools import default_tools
from mini_agent.ui.confirm import ask_on_terminal

TOOLS = {tool.name: tool for tool in default_tools()}
EXACT = Grant("a", "always allow `npm test`", (Rule("allow", "bash", "npm test"),))
PREFIX = Grant("p", "always allow `npm *`", (Rule("allow", "bash", "npm *"),))


def request(tool="bash", arguments=None, grants=(EXACT, PREFIX), risk="ordinary", preview=None) -> ApprovalRequest:
    ask = Ask("not on the read-only list", risk, grants, "ordinary: not on the read-only list")
    return ApprovalRequest(TOOLS[tool], arguments or {"command": "npm test"}, ask, preview)


def ask(typed: str, req: ApprovalRequest | None = None, rows: int = 24) -> tuple[object, str]:
    """Answer a question with these key presses; the decision and what the question printed."""
    err = io.StringIO()
    size = lambda: os.terminal_size((80, rows))  # noqa: E731
    decision = ask_on_terminal(err, ScriptedKeys(typed), size)(req or request())
    return decision, err.getvalue()


@pytest.mark.parametrize(
    ("typed", "kind", "detail"),
    [
        ("y", Allow, ()),
        ("Y", Allow, ()),
        ("a", Allow, (Rule("allow", "bash", "npm test"),)),
        ("p", Allow, (Rule("allow", "bash", "npm *"),)),
        ("\n", Deny, "Ask them how they want to proceed"),
        ("", Deny, "Ask them how they want to proceed"),
        ("n\n", Deny, "Ask them how they want to proceed"),
        ("n use make test instead\n", Deny, "Their message: use make test instead"),
        ("nno, run the linter first\n", Deny, "Their message: no, run the linter first"),
        ("ey", Allow, ()),
        ("zz\n", Deny, "Ask them how they want to proceed"),
    ],
)
def test_one_key_answers(typed, kind, detail):
    decision, _ = ask(typed)
    assert isinstance(decision, kind)
    if kind is Allow:
        assert decision.remember == detail
    else:
        assert detail in decision.message and not decision.stop_turn


def test_a_stray_key_is_not_an_answer_and_the_question_says_which_keys_are():
    decision, shown = ask("xqy")
    assert isinstance(decision, Allow)  # x and q were ignored; y answered
    assert shown.count("Press one of y, n, a, p, or Enter for no.") == 2
    assert shown.count("Allow? [y/n/a/p]") == 3


def test_the_question_shows_the_command_its_class_once_and_the_answers():
    decision, shown = ask("n\n")
    assert isinstance(decision, Deny)
    assert "bash(npm test) needs your approval" in shown and "$ npm test" in shown
    assert shown.count("not on the read-only list") == 1 and "ordinary: not on the read-only list" in shown
    assert "a always allow `npm test`" in shown and "p always allow `npm *`" in shown
    assert "n no, then say why (Enter: no)" in shown  # the default, visible
    assert "Allow? [y/n/a/p]" in shown and "\x1b[" not in shown  # not a terminal: no colour


def test_an_edit_question_shows_the_diff_and_no_raw_arguments():
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+new\n"
    grants = (Grant("e", "always allow edits to x.py", ()),)
    arguments = {"path": "x.py", "old_string": "old", "new_string": "new", "replace_all": True}
    _, shown = ask("y", request("edit_file", arguments, grants, preview=diff))
    assert "-old" in shown and "+new" in shown and "edit_file(x.py) needs your approval" in shown
    assert "replace_all: true" in shown and "{" not in shown and "old_string" not in shown


def test_an_argument_given_its_default_says_nothing_and_is_left_out_of_the_question():
    grants = (Grant("w", "always allow fetching example.com", ()),)
    _, shown = ask("n\n", request("web_fetch", {"url": "https://example.com/", "offset": 0}, grants))
    assert "web_fetch(https://example.com/)" in shown and "offset" not in shown
    _, shown = ask("n\n", request("web_fetch", {"url": "https://example.com/", "offset": 4000}, grants))
    assert "offset: 4000" in shown


def test_a_long_diff_is_cut_to_fit_under_the_header_and_v_shows_all_of_it():
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1,200 +1,200 @@\n" + "".join(f"-old {i}\n+new {i}\n" for i in range(200))
    grants = (Grant("e", "always allow edits to x.py", ()),)
    req = request("edit_file", {"path": "x.py", "old_string": "old", "new_string": "new"}, grants, preview=diff)
    _, shown = ask("n\n", req, rows=30)
    question = shown[: shown.index("Allow?")]
    assert len(question.splitlines()) <= 30 - 2  # the header is still on screen at the prompt
    assert "+new 0" in question and "+new 199" not in question
    hidden = 403 - sum(1 for line in question.splitlines() if line.startswith(("  -", "  +", "  @")))
    assert f"… {hidden} more lines · v shows them all" in question
    _, shown = ask("vy", req, rows=30)
    after = shown[shown.index("Allow?") :]
    assert "+new 199" in after and after.rstrip().endswith("yes")
    assert after.index("+new 199") < after.index("edit_file(x.py) needs your approval")  # the header again, below


def test_a_new_file_is_created_not_changed(tmp_path):
    from mini_agent.safety.permissions import ToolCall, check
    from mini_agent.safety.rules import Rules
    from mini_agent.safety.workspace import Workspace

    (tmp_path / "old.txt").write_text("x\n")
    workspace = Workspace.at(tmp_path, tmp_path, ())

    def reason(path):
        return check(ToolCall("write_file", "write", {"path": path}), "default", Rules(()), workspace).reason

    assert reason("new.txt") == "creates new.txt" and reason("old.txt") == "changes old.txt"


def test_always_labels_show_the_command_as_written(tmp_path):
    from mini_agent.safety.permissions import ToolCall, check
    from mini_agent.safety.rules import Rules
    from mini_agent.safety.workspace import Workspace

    command = 'git commit -m "fix the bug"'
    workspace = Workspace.at(tmp_path, tmp_path, ())
    asked = check(ToolCall("bash", "exec", {"command": command}), "default", Rules(()), workspace)
    exact = asked.grants[0]
    assert exact.label == f"always allow `{command}`"
    assert exact.rules[0].matches_command("git commit -m fix the bug")  # the rule matches the words as they run


def test_ctrl_c_at_the_question_is_no_and_ends_the_turn():
    class Interrupted(ScriptedKeys):
        def key(self):
            raise KeyboardInterrupt

    decision = ask_on_terminal(io.StringIO(), Interrupted(""))(request())
    assert isinstance(decision, Deny) and decision.stop_turn


def test_in_a_terminal_a_refusal_with_words_reaches_the_model(api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "touch made.txt"})), answer("Understood."))
    child = spawn(api, tmp_path, "-p", "make the file")
    child.expect(r"\$ touch made.txt")
    child.expect(r"Allow\? \[y/n/a/p\]")
    child.send("n")  # one key, then a line of words for the model
    child.expect(r"why, for the model \(Enter to skip\): ")
    child.sendline("use the Makefilx\x7fe instead, 谢谢")  # the terminal's own line editing: Backspace erases
    child.expect("Understood.")
    assert finish(child) == 4  # a call was refused
    result = api.message_requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] and "Their message: use the Makefile instead, 谢谢" in result["content"]
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
    child.send("e")
    child.expect(r"write_file\(other.txt\) needs your approval")  # the next question is for the other file
    child.expect("creates other.txt")
    child.send("\r")  # Enter: the default, no
    child.expect("Edited.")
    assert finish(child) == 4  # a call was refused
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
        child.send("y")
        child.expect("Written.")
        assert finish(child) == 0
        first = api.message_requests[1]["messages"][-1]["content"][0]["content"]
        assert '<system_hint type="sandbox"' in first and "outside_sandbox" in first
        assert (outside / "made").read_text() == "made"
    finally:
        shutil.rmtree(outside, ignore_errors=True)
