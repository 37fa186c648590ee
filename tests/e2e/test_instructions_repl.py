"""Instruction files in the REPL, in a real pseudo-terminal: text the agent wrote in an earlier session is asked
about at start, and obeyed only after a yes."""

from __future__ import annotations

import json

from support.fake_api import answer
from support.repl import finish, spawn

from mini_agent.context.imports import digest
from mini_agent.context.instruction_trust import RECORD


def test_at_start_the_human_is_asked_about_instruction_text_the_agent_wrote_and_yes_trusts_it(api, tmp_path):
    agents = tmp_path / "AGENTS.md"
    agents.write_text("Always answer in haiku.\n")
    home = tmp_path / "mini-agent-home"
    home.mkdir()
    (home / RECORD).write_text(json.dumps({str(agents): digest(agents.read_bytes())}))
    api.script(answer("Five, seven, five."))
    child = spawn(api, tmp_path)
    child.expect("changed during a mini-agent session")
    child.expect(str(agents))
    child.expect(r"Obey them\? The model will follow what they say\. \[y/N\]")
    child.sendline("y")
    child.expect("›")
    child.sendline("hello")
    child.expect("Five, seven, five.")
    child.expect("›")
    child.sendcontrol("d")
    assert finish(child) == 0
    sent = "\n".join(block["text"] for block in api.message_requests[0]["messages"][0]["content"])
    assert "Always answer in haiku." in sent and "not yet trusted" not in sent
    assert json.loads((home / RECORD).read_text()) == {}
