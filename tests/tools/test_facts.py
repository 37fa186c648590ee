"""A tool's facts (its Claude-style alias, its key argument, whether it edits files) are declared once, on the
tool, and every extension point that names tools by them reads that declaration: hooks' matchers, command files'
`allowed-tools`, agent files' `tools:`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mini_agent.hooks import Hooks
from mini_agent.hooks.definitions import HookDef
from mini_agent.tools import (
    BASH,
    EDIT_FILE,
    EXIT_PLAN_MODE,
    JOB_OUTPUT,
    READ_FILE,
    STOP_JOB,
    TODO_WRITE,
    WEB_FETCH,
    WRITE_FILE,
    builtin_tool,
    default_tools,
)
from mini_agent.tools.base import ToolContext, tool

PACKAGE = Path(__file__).resolve().parents[2] / "mini_agent"
BUILTIN = list(default_tools())


def task_tool():
    from mini_agent.subagents.task_tool import task_tool

    return task_tool(lambda description, prompt, agent: "", {}, {})


def skill_tool():
    from mini_agent.skills.catalog import Catalog
    from mini_agent.skills.tool import skill_tool

    return skill_tool(Catalog, [])


def every_tool():
    return [*BUILTIN, task_tool(), skill_tool()]


def test_every_built_in_tool_and_the_task_and_skill_tools_declare_its_alias_and_key_argument():
    facts = {item.name: (item.alias, item.key_argument, item.edits_files) for item in every_tool()}
    assert facts == {
        "read_file": ("Read", "path", False),
        "write_file": ("Write", "path", True),
        "edit_file": ("Edit", "path", True),
        "bash": ("Bash", "command", False),
        "web_fetch": ("WebFetch", "url", False),
        "job_output": ("BashOutput", "job_id", False),
        "stop_job": ("KillShell", "job_id", False),
        "todo_write": ("TodoWrite", None, False),
        "exit_plan_mode": ("ExitPlanMode", None, False),
        "task": ("Task", "description", False),
        "skill": ("Skill", "name", False),
    }
    assert [item.name for item in BUILTIN] == [
        *(READ_FILE, WRITE_FILE, EDIT_FILE, BASH, JOB_OUTPUT, STOP_JOB, WEB_FETCH, TODO_WRITE, EXIT_PLAN_MODE)
    ]


@pytest.mark.parametrize("declared", every_tool(), ids=lambda item: item.name)
def test_a_hook_matcher_selects_a_tool_by_its_alias(declared, tmp_path):
    hooks = Hooks([HookDef("PreToolUse", "echo stop >&2; exit 2", declared.alias, 10.0, "user", "test")], tmp_path)
    assert hooks.before_tool("t1", declared, {}).blocked == "Blocked by a PreToolUse hook: stop"
    other = next(item for item in every_tool() if item.name != declared.name)
    assert hooks.before_tool("t2", other, {}).blocked is None


@pytest.mark.parametrize("declared", BUILTIN, ids=lambda item: item.name)
def test_a_command_files_allowed_tools_and_an_agent_files_tools_name_a_tool_by_its_alias(declared, api, settings_for):
    from mini_agent.commands.files import read_command
    from mini_agent.subagents.delegation import with_subagents

    settings = settings_for(api)
    path = settings.cwd / "c.md"
    path.write_text(f"---\nallowed-tools: {declared.alias}\n---\nbody\n")
    command = read_command(path, "/c", "user")
    # Claude Code's Edit stands for both tools that edit files, as its Edit rules cover every editing tool.
    covered = [declared.name, "write_file"] if declared.alias == "Edit" else [declared.name]
    assert [rule.text for rule in command.rules.rules] == covered and command.problems == ()

    agents = settings.cwd / ".mini-agent" / "agents"
    agents.mkdir(parents=True)
    (agents / "one.md").write_text(f"---\ndescription: one tool\ntools: {declared.alias}\n---\n")
    _, delegation, problems = with_subagents(default_tools(), settings)
    assert problems == [] and delegation.definitions["one"].tools == (declared.name,)


def test_an_alias_is_written_only_where_its_tool_is_declared():
    aliases = {item.alias for item in every_tool()}
    declaring = {"tools", "subagents/task_tool.py", "skills/tool.py", "safety/rules.py"}  # rules: see below
    found = []
    for path in PACKAGE.rglob("*.py"):
        where = path.relative_to(PACKAGE).as_posix()
        if where.split("/")[0] in declaring or where in declaring:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in aliases:
                found.append(f"{where}:{node.lineno} {node.value!r}")
    assert found == []


def test_the_rules_claude_spelling_agrees_with_the_tools_aliases():
    """The rule language (below the tools) has its own table of Claude Code's names; each built-in tool's alias
    names it first there, and the task tool's is one the rules accept and keep inert (no rules cover sub-agents)."""
    from mini_agent.safety.rules import CLAUDE_TOOLS, CLAUDE_WITHOUT_COUNTERPART

    assert {item.alias: CLAUDE_TOOLS[item.alias][0] for item in BUILTIN} == {item.alias: item.name for item in BUILTIN}
    assert set(CLAUDE_TOOLS) - {item.alias for item in BUILTIN} == {"MultiEdit", "TaskOutput", "KillBash"}
    assert task_tool().alias in CLAUDE_WITHOUT_COUNTERPART


def test_no_layer_above_the_tools_writes_a_built_in_tools_name():
    """Below the tools, the policy's rules speak the tools' names as their own language (safety cannot import
    the tools); above them, a name is read from a declaration or imported from tools/."""
    names = {item.name for item in BUILTIN}
    below = ("safety/", "tools/")
    found = []
    for path in PACKAGE.rglob("*.py"):
        where = path.relative_to(PACKAGE).as_posix()
        if where.startswith(below) or where == "tools/__init__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in names:
                found.append(f"{where}:{node.lineno} {node.value!r}")
    assert found == []


def test_the_policys_own_names_for_the_tools_agree_with_their_declarations():
    from mini_agent.safety.refusals import mode_that_runs
    from mini_agent.safety.rules import EDIT_TOOLS, FILE_TOOLS, TOOLS

    assert set(TOOLS) == {item.name for item in BUILTIN}
    assert set(EDIT_TOOLS) == {item.name for item in BUILTIN if item.edits_files}
    assert set(FILE_TOOLS) == {item.name for item in BUILTIN if item.key_argument == "path"}
    edits = {item.name for item in BUILTIN if item.edits_files}
    assert {item.name for item in BUILTIN if mode_that_runs(item.name) == "accept-edits"} == edits


def test_a_claude_spelling_is_a_tools_alias_exactly_and_a_name_is_never_read_as_one():
    assert builtin_tool("Read").name == "read_file" and builtin_tool("read_file").name == "read_file"
    assert builtin_tool("read") is None and builtin_tool("Teleport") is None


def test_a_declaration_whose_facts_do_not_fit_its_function_is_refused():
    def fetch(ctx: ToolContext, url: str) -> str:
        """Fetch.

        Args:
            url: Where.
        """
        return url

    with pytest.raises(TypeError, match="key argument"):
        tool(risk="network", guidance="", key_argument="address")(fetch)
    with pytest.raises(TypeError, match="edits files"):
        tool(risk="write", guidance="", edits_files=True)(fetch)
