"""Plan mode in a real pseudo-terminal: the plan question read key by key from the terminal, the mode switched on
approval as the prompt shows, and the todo list drawn under its call."""

from __future__ import annotations

from support.fake_api import answer, tool_use
from support.repl import finish, spawn

PROMPT = "›"
TODOS = [
    {"content": "Write the greeting", "status": "in_progress", "activeForm": "Writing the greeting"},
    {"content": "Check it", "status": "pending", "activeForm": "Checking it"},
]


def test_a_plan_approved_with_one_key_switches_the_mode_and_the_work_runs_without_a_question(api, tmp_path):
    api.script(
        answer(tool_use("exit_plan_mode", {"plan": "# Plan\n\n1. Write **hello.txt**"})),
        answer(tool_use("todo_write", {"todos": TODOS})),
        answer(tool_use("write_file", {"path": "hello.txt", "content": "hello\n"})),
        answer("Written."),
    )
    child = spawn(api, tmp_path, "--permission-mode", "plan")
    child.expect(r"\[plan\]")
    child.expect(PROMPT)
    child.sendline("greet")
    child.expect("The plan, for your approval")
    child.expect("Write ")
    child.expect("hello.txt")  # bold: rendered as Markdown, the markup gone
    child.expect(r"Carry out this plan\? \[a/y/e/n\] ")
    child.send("a")  # one key, no Enter
    child.expect("accept edits without asking")
    child.expect("◐ Writing the greeting")
    child.expect("☐ Check it")
    child.expect("Written.")
    child.expect(r"\[accept-edits\]")
    child.expect(PROMPT)
    assert (tmp_path / "hello.txt").read_text() == "hello\n"
    child.sendcontrol("d")
    assert finish(child) == 0
