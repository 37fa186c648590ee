"""The conversation across turns in a real pseudo-terminal against the loopback model: instruction files the
agent changed, Ctrl-C mid-command and mid-reply, resuming with the last exchange shown, memory notes."""

from __future__ import annotations

from fake_api import answer, tool_use
from test_interactive import finish, spawn

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
