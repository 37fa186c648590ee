"""MCP tools on demand (tools/deferred.py): past the budget, the request carries the built-in tools and
tool_search, and the tools found are appended, so each request's tool list begins with the previous one's."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.mcp.tools import McpTool
from mini_agent.tools import default_tools
from mini_agent.tools.base import Tool, ToolContext
from mini_agent.tools.deferred import SEARCH, DeferredTools, schema_chars

TOPICS = ["weather forecast", "github issue", "calendar event", "database query", "slack message"]


def extra(index: int) -> Tool:  # an MCP server's tool, as mcp/tools.py makes them
    topic = TOPICS[index % len(TOPICS)]
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    return McpTool(
        f"mcp__s__tool_{index}",
        f"Work with a {topic} (number {index}).",
        schema,
        lambda ctx, **a: f"ran {index}",
        "",
        "mcp",
        None,
        server="s",
        remote=f"tool_{index}",
    )


def registry_with(count: int):
    registry = default_tools()
    registry.defer_extra(DeferredTools(registry))
    registry.replace_extra([extra(index) for index in range(count)])
    return registry


def names(schemas: list[dict]) -> list[str]:
    return [schema["name"] for schema in schemas]


def test_within_the_budget_every_schema_is_sent_and_no_search():
    registry = registry_with(10)
    sent = registry.schemas(budget_chars=10**9)
    assert names(sent) == [*names(registry.builtin_schemas()), *(f"mcp__s__tool_{i}" for i in range(10))]
    assert SEARCH not in names(sent)
    assert SEARCH not in registry.guidance()  # the system prompt does not change with the servers


def test_over_the_budget_only_the_search_is_offered_and_it_finds_tools():
    registry = registry_with(50)
    budget = 2_000
    total = sum(schema_chars(tool.schema()) for tool in registry.extra_tools() if tool.name != SEARCH)
    assert total > budget
    sent = registry.schemas(budget)
    assert names(sent) == [*names(registry.builtin_schemas()), SEARCH]
    found = registry.call(SEARCH, {"query": "github issues", "limit": 3}, ToolContext(cwd=Path(".")))
    assert not found.is_error and found.content.count("mcp__s__tool_") == 3
    later = registry.schemas(budget)
    assert later[: len(sent)] == sent  # the prefix (and the prompt cache) holds
    assert all("github issue" in schema["description"] for schema in later[len(sent) :])


def test_select_by_name_and_unknown_names():
    registry = registry_with(30)
    result = registry.call(SEARCH, {"query": "select:mcp__s__tool_7,mcp__s__tool_2"}, ToolContext(cwd=Path(".")))
    assert not result.is_error
    assert names(registry.schemas(100)[-2:]) == ["mcp__s__tool_7", "mcp__s__tool_2"]
    missing = registry.call(SEARCH, {"query": "select:mcp__s__nope"}, ToolContext(cwd=Path(".")))
    assert missing.is_error and "mcp__s__nope" in missing.content


def test_nothing_matches_is_said():
    registry = registry_with(30)
    result = registry.call(SEARCH, {"query": "zzz qqq"}, ToolContext(cwd=Path(".")))
    assert not result.is_error and "No tool matches" in result.content


def test_a_tool_not_yet_found_is_still_callable_by_name():
    registry = registry_with(30)
    assert SEARCH in names(registry.schemas(100))
    assert registry.call("mcp__s__tool_12", {"q": "x"}, ToolContext(cwd=Path("."))).content == "ran 12"


def test_the_offered_list_is_worked_out_once_per_change():
    registry = registry_with(40)
    first = registry.schemas(500)
    assert registry.schemas(500) is first  # nothing changed: the same list, no work per step
    registry.call(SEARCH, {"query": "calendar"}, ToolContext(cwd=Path(".")))
    assert registry.schemas(500) is not first


@given(st.lists(st.sampled_from([*TOPICS, "select:mcp__s__tool_3", "select:mcp__s__tool_11", "nothing"]), max_size=8))
@settings(max_examples=60, deadline=None)
def test_any_searches_only_ever_append(queries):
    registry = registry_with(25)
    previous = registry.schemas(300)
    for query in queries:
        registry.call(SEARCH, {"query": query, "limit": 2}, ToolContext(cwd=Path(".")))
        now = registry.schemas(300)
        assert now[: len(previous)] == previous
        assert len(set(names(now))) == len(now)  # no tool offered twice
        previous = now
    json.dumps(previous)  # sendable as it is
