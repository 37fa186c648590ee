"""Ctrl-O at the REPL's prompt, in a real pseudo-terminal: the folded thinking of the last reply printed in full,
its control characters shown by name. The key is prompt-toolkit's, read from a real terminal: only a pty shows it."""

from __future__ import annotations

from support.fake_api import answer, thinking
from support.repl import finish, spawn

PROMPT = "›"


def test_ctrl_o_prints_the_last_thinking_that_was_shown_folded(api, tmp_path):
    api.script(answer(thinking("First weigh the options.\x07 Then pick one.", "sig-P"), "Picked."))
    budget_model = ("--model", "claude-opus-4-1")  # a model that takes a thinking budget
    child = spawn(api, tmp_path, "--provider", "anthropic", "--base-url", api.url, *budget_model, "--effort", "low")
    child.expect(PROMPT)
    child.sendline("pick one")
    child.expect(r"Thought for \d+ tokens \(Ctrl-O to show\)")
    child.expect("Picked.")
    child.expect("cached")  # the status line: the turn is over
    child.expect(PROMPT)
    # The prompt can be drawn before its keys are read: a typed letter echoed back says they are.
    child.send("x")
    child.expect("x")
    child.send("\x7f")
    child.sendcontrol("o")
    child.expect("First weigh the options.⟨BEL⟩ Then pick one.")
    # The thinking is printed with the terminal in cooked mode (prompt_toolkit's run_in_terminal), where a Ctrl-D
    # is the line discipline's end of file, never a key the REPL reads: wait for the prompt drawn again after it.
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    assert api.message_requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 2_000}
