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


def test_context_shows_what_the_mcp_schemas_cost_and_whether_they_are_found_on_demand(api, settings_for, tmp_path):
    from mini_agent.mcp.tools import McpTool
    from mini_agent.tools.deferred import SEARCH, DeferredTools

    agent = scripted_agent(settings_for(api))
    schema = {"type": "object", "properties": {"q": {"type": "string", "description": "x" * 400}}}
    many = [McpTool(f"mcp__s__t{i}", "A tool. " * 20, schema, None, "", "mcp", None, server="s") for i in range(200)]
    agent.registry.defer_extra(DeferredTools(agent.registry))
    agent.registry.replace_extra(many)
    line = next(line for line in context_lines(agent) if "MCP tools" in line)
    assert "MCP tools: 200" in line and "found on demand with tool_search; 0 found so far" in line
    parts = {part.strip().rsplit(" ", 1)[0].strip(): part for part in context_lines(agent)}
    tool_line = next(value for key, value in parts.items() if key.startswith("tool schemas"))
    assert int(tool_line.split()[-1].replace(",", "")) < 5_000  # the request's cost, not the 200 schemas'
    agent.registry.call(SEARCH, {"query": "select:mcp__s__t3"}, agent.ctx)
    assert "1 found so far" in next(line for line in context_lines(agent) if "MCP tools" in line)
    agent.registry.replace_extra(many[:2])
    assert "all sent with each request" in next(line for line in context_lines(agent) if "MCP tools" in line)
