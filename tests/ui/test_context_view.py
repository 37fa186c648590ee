"""`/context` names the instruction files shown, their imports and the imports refused (real files)."""

from __future__ import annotations

from support import scripted_agent

from mini_agent.ui.context_view import context_lines


def test_context_lists_the_instruction_files_their_imports_and_what_was_refused(api, settings_for, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "AGENTS.md").write_text("Rules. @docs/style.md @.env\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "style.md").write_text("Tabs.\n")
    (tmp_path / ".env").write_text("TOKEN=1\n")
    lines = context_lines(scripted_agent(settings_for(api)))
    at = lines.index("  instruction files:")
    assert lines[at + 1 : at + 3] == [f"    {tmp_path / 'AGENTS.md'}", f"      {tmp_path / 'docs' / 'style.md'}"]
    assert lines[at + 3].startswith(f"    [@.env in {tmp_path / 'AGENTS.md'} was not imported: .env likely holds")


def test_context_says_where_instructions_would_come_from_when_there_are_none(api, settings_for, tmp_path):
    (tmp_path / ".git").mkdir()
    lines = context_lines(scripted_agent(settings_for(api)))
    assert "  instruction files: none (AGENTS.md, CLAUDE.md, CLAUDE.local.md; /init writes an AGENTS.md)" in lines
