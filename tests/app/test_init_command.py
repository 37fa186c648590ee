"""`/init`: the prompt it sends, where the file goes, `-p "/init"` through the real tools and permission policy, and
the REPL's question before an existing AGENTS.md is touched (a real pseudo-terminal: tests/e2e/test_init_repl.py)."""

from __future__ import annotations

from pathlib import Path

from support.fake_api import answer, tool_use

from mini_agent.app.init_command import init_prompt, overwrite_question, target


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_prompt_asks_for_commands_architecture_and_conventions_concisely_at_the_repository_root(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "src" / "deep").mkdir(parents=True)
    prompt = init_prompt(tmp_path / "src" / "deep")
    assert target(tmp_path / "src" / "deep") == tmp_path / "AGENTS.md"
    assert f"and write {tmp_path / 'AGENTS.md'}:" in prompt
    for asked in ("build, lint", "run the tests", "single test", "Architecture", "Conventions", "README", "one page"):
        assert asked in prompt, asked
    assert "write_file tool" in prompt and "improve" not in prompt.lower()
    assert ".cursor/rules/" in prompt and "copilot-instructions.md" in prompt  # to look for, none here


def test_the_other_tools_instruction_files_present_are_named_to_carry_over(tmp_path):
    write(tmp_path / "CLAUDE.md", "x")
    write(tmp_path / ".cursor" / "rules" / "style.mdc", "x")
    write(tmp_path / ".github" / "copilot-instructions.md", "x")
    prompt = init_prompt(tmp_path)
    assert "here: CLAUDE.md, .cursor/rules/, .github/copilot-instructions.md (carry their rules over)" in prompt


def test_what_follows_init_is_passed_on(tmp_path):
    assert init_prompt(tmp_path, "  focus on the tests ").endswith("\n\nThe user adds: focus on the tests")
    assert "The user adds" not in init_prompt(tmp_path, "  ")


def test_an_existing_agents_md_is_asked_about_and_improved_not_replaced(tmp_path):
    assert overwrite_question(tmp_path) is None
    write(tmp_path / "AGENTS.md", "# AGENTS.md\nRun make.\n")
    assert overwrite_question(tmp_path) == f"{tmp_path / 'AGENTS.md'} exists: improve it?"
    prompt = init_prompt(tmp_path)
    assert f"and improve {tmp_path / 'AGENTS.md'}:" in prompt
    assert "improve it rather than replace it" in prompt and "edit_file" in prompt


def test_p_init_sends_the_prompt_and_the_file_is_written_through_write_file(run_cli, api, tmp_path):
    content = "# AGENTS.md\nA demo.\n\n## Commands\n- `make test`\n"
    api.script(
        answer(tool_use("write_file", {"path": "AGENTS.md", "content": content})),
        answer("Wrote AGENTS.md: commands only; no CI found."),
    )
    expected = init_prompt(tmp_path)  # before the file exists
    done = run_cli(["-p", "/init", "--permission-mode", "accept-edits"], api)
    assert done.returncode == 0, done.stderr.decode()
    first = api.message_requests[0]["messages"][0]["content"]
    assert first[0]["text"] == expected
    assert (tmp_path / "AGENTS.md").read_text() == content
    assert not api.message_requests[1]["messages"][-1]["content"][0].get("is_error")


def test_p_init_writes_nothing_the_permission_policy_does_not_allow(run_cli, api, tmp_path):
    write(tmp_path / "AGENTS.md", "# AGENTS.md\nKeep me.\n")
    api.script(
        answer(tool_use("read_file", {"path": "AGENTS.md"})),
        answer(tool_use("write_file", {"path": "AGENTS.md", "content": "replaced\n"})),
        answer("Could not write."),
    )
    done = run_cli(["-p", "/init"], api)  # default mode and no terminal: a write is asked, so refused
    assert done.returncode == 4, done.stderr.decode()
    assert "and improve" in api.message_requests[0]["messages"][0]["content"][0]["text"]
    assert (tmp_path / "AGENTS.md").read_text() == "# AGENTS.md\nKeep me.\n"
