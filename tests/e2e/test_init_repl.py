"""`/init` in the REPL, in a real pseudo-terminal: an existing AGENTS.md is asked about before anything is sent."""

from __future__ import annotations

from support.fake_api import answer
from support.repl import finish, spawn

PROMPT = "›"


def test_init_asks_before_touching_an_existing_agents_md_and_no_sends_nothing(api, tmp_path):
    (tmp_path / "AGENTS.md").write_text("# AGENTS.md\nRun make.\n")
    api.script(answer("Improved it."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.sendline("/init")
    child.expect(r"AGENTS\.md exists: improve it\? \[y/N\]")
    child.send("n")
    child.expect("left as it is; nothing was sent")
    child.expect(PROMPT)
    assert api.message_requests == []
    child.sendline("/init")
    child.expect(r"improve it\? \[y/N\]")
    child.send("y")
    child.expect("Improved it.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    [request] = api.message_requests
    assert "improve it rather than replace it" in request["messages"][0]["content"][0]["text"]
