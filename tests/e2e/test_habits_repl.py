"""The REPL habits that need a real terminal: Ctrl-C stops a `!command` and everything it started."""

from __future__ import annotations

from support import alive, eventually, process_running
from support.fake_api import answer
from support.repl import finish, spawn

PROMPT = "›"


def test_ctrl_c_kills_a_bang_command_with_its_children_and_the_model_hears_it(api, tmp_path):
    api.script(answer("Understood."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.sendline("!echo before; sleep 60.7373 & exec sleep 60.7374")
    background = eventually(lambda: process_running("sleep", "60.7373"), "the background sleep starting")
    foreground = eventually(lambda: process_running("sleep", "60.7374"), "the command starting")
    child.sendcontrol("c")
    child.expect("Interrupted")
    child.expect(PROMPT)
    assert not alive(foreground) and not alive(background)
    child.sendline("what happened?")
    child.expect("Understood.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    told = [block["text"] for block in api.message_requests[0]["messages"][-1]["content"]]
    shell = next(text for text in told if text.startswith("<bash-input>"))
    assert "<bash-stdout>before\nInterrupted: the user pressed Ctrl-C" in shell
