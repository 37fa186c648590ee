"""The conversation across turns in a real pseudo-terminal against the loopback model: instruction files the
agent changed, Ctrl-C mid-command and mid-reply, resuming with the last exchange shown, memory notes."""

from __future__ import annotations

import json
import re

from support import alive, eventually, process_running
from support.fake_api import answer, failure, tool_use
from support.repl import finish, spawn, wrapped

PROMPT = "›"


def context_text(request: dict, name: str) -> list[str]:
    """Every `<context name=...>` block of this name the request carries, in order."""
    opening = f'<context name="{name}"'
    return [
        block["text"]
        for message in request["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text" and block["text"].startswith(opening)
    ]


def test_instruction_and_memory_files_changed_by_the_agent_are_in_the_next_turns_request(api, tmp_path):
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    home = tmp_path / "mini-agent-home"
    home.mkdir()
    (home / "memory.md").write_text("- The user is called Ada.\n")
    api.script(
        answer(
            tool_use("read_file", {"path": "AGENTS.md"}, id="r1"),
            tool_use("edit_file", {"path": "AGENTS.md", "old_string": "tabs", "new_string": "spaces"}, id="e1"),
        ),
        answer("Switched to spaces."),
        answer(tool_use("bash", {"command": "echo '- Ada likes tea.' >> mini-agent-home/memory.md"}, id="b1")),
        answer("Noted the tea."),
        answer("Spaces and tea."),
    )
    # Outside the sandbox: inside it, the agent's own home (where memory.md lives) is read-only to commands.
    child = spawn(api, tmp_path, "--dangerously-skip-permissions")
    child.expect(PROMPT)
    child.sendline("prefer spaces from now on")
    child.expect("Switched to spaces.")
    child.expect(PROMPT)
    child.sendline("note that I like tea")
    child.expect("Noted the tea.")
    child.expect(PROMPT)
    child.sendline("what do you know?")
    child.expect("Spaces and tea.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    first, second, third = api.message_requests[0], api.message_requests[2], api.message_requests[4]
    assert (tmp_path / "AGENTS.md").read_text() == "Use spaces.\n"
    assert "Use tabs." in context_text(first, "project_instructions")[-1]
    # Well inside the 30 s and 60 s TTLs: the edit and the command, not the clock, made the sources read again.
    assert "Use spaces." in context_text(second, "project_instructions")[-1]
    assert "Ada likes tea." in context_text(third, "user_memory")[-1]


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


def test_continue_shows_the_last_exchange_before_the_prompt(run_cli, api, tmp_path):
    api.script(answer("Apples are red."), answer("Pears are green.\nAnd sweet."), answer("Plums next."))
    assert run_cli(["-p", "what colour are apples?"], api).returncode == 0
    assert run_cli(["-p", "and pears?", "--continue"], api).returncode == 0
    child = spawn(api, tmp_path, "--continue")
    child.expect("Continuing session")
    child.expect("› what colour are apples\\?")
    child.expect("Apples are red.")
    child.expect("› and pears\\?")
    child.expect("Pears are green.")
    child.expect("And sweet.")
    child.expect(PROMPT)
    child.sendline("plums?")
    child.expect("Plums next.")
    child.expect(PROMPT)
    child.sendline("/resume")
    child.expect("No other session")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0


def test_an_overflow_compaction_cannot_fix_says_what_to_do_without_the_program_prefix(api, tmp_path):
    too_long = "prompt is too long: 250000 tokens > 200000 maximum"
    api.script(failure(400, "invalid_request_error", too_long), answer("Fresh and small."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.sendline("summarise everything")
    child.expect("The conversation is too long")
    assert "mini-agent:" not in child.before.splitlines()[-1]
    # One long line, wrapped at the terminal's width wherever the loopback port's digits put the break.
    child.expect(wrapped("Compaction could not make the conversation any smaller"))
    child.expect("/clear")
    child.expect(wrapped("bigger context window"))
    child.expect(wrapped("attach less"))
    child.expect(PROMPT)
    child.sendline("/clear")
    child.expect("New conversation.")
    child.expect(PROMPT)
    child.sendline("hello")
    child.expect("Fresh and small.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    session = sorted((tmp_path / "mini-agent-home" / "sessions").glob("*/*.jsonl"))
    logged = [json.loads(line) for path in session for line in path.read_text().splitlines()[1:]]
    (error,) = [entry for entry in logged if entry["type"] == "turn_error"]
    assert error["kind"] == "overflow" and "/clear" in error["message"]


def test_remember_and_memory_add_append_to_the_user_memory_file_shown_in_context_and_the_next_request(api, tmp_path):
    api.script(answer("Tabs it is, and tea."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.sendline("remember that I prefer tabs")
    child.expect("Saved to .*memory.md")
    child.expect("I prefer tabs")
    child.expect(PROMPT)
    child.sendline("/memory add 记住 I drink tea")
    child.expect("Saved to")
    child.expect(PROMPT)
    child.sendline("/context")
    child.expect(r"user memory: 2 line\(s\) in .*memory.md")
    child.expect(PROMPT)
    child.sendline("what do I like?")
    child.expect("Tabs it is, and tea.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    memory = (tmp_path / "mini-agent-home" / "memory.md").read_text()
    assert memory == "- I prefer tabs\n- 记住 I drink tea\n"
    (request,) = api.message_requests  # the notes themselves were not sent to the model as turns
    assert [m["content"][0]["text"] for m in request["messages"]] == ["what do I like?"]
    assert "- I prefer tabs\n- 记住 I drink tea" in context_text(request, "user_memory")[-1]
