"""MCP tools on demand: past a budget, the extra tools' schemas stay out of the request and the model finds the
ones it needs with `tool_search`; those found are offered from then on.

A server with 155 tools adds ~24k tokens of schemas to every request. Under the budget (a share of the context
window: `mcp_schema_share`) nothing changes: every schema is sent. Over it the request carries the built-in tools,
`tool_search` and the tools found so far, appended in the order found, so the request's prefix (and the prompt
cache) only grows. Every tool stays callable by name: a call to one not yet found runs as any call does, through
the same policy. The schemas offered are worked out again only when the tools, the budget or what was found
changed: per-step work does not grow with the conversation.
"""

from __future__ import annotations

import json
import re
import threading
from typing import TYPE_CHECKING

from mini_agent.tools.base import Tool, ToolContext, ToolError, ToolResult, tool

if TYPE_CHECKING:
    from mini_agent.tools.base import ToolRegistry

SEARCH = "tool_search"
MOST_FOUND = 20
CHARS_PER_TOKEN = 4
"""How schema text is priced against the window (JSON of English descriptions runs at about four per token)."""


def schema_chars(schema: dict) -> int:
    return len(json.dumps(schema, ensure_ascii=False))


class DeferredTools:
    """Which extra tools a request offers, and the search that adds to them."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._found: dict[str, None] = {}
        self._lock = threading.Lock()
        self._offered: tuple[tuple, list[dict]] | None = None
        self.tool = _search_tool(self)

    def schemas(self, budget_chars: int | None) -> list[dict]:
        """The `tools` request parameter: every schema within the budget, else built-ins, search and the found."""
        builtin, extra = self._registry.builtin_schemas(), self._registry.extra_tools()
        others = [candidate for candidate in extra if candidate.name != SEARCH]
        with self._lock:
            key = (id(builtin), tuple(map(id, others)), budget_chars, len(self._found))
            if self._offered is not None and self._offered[0] == key:
                return self._offered[1]
            if budget_chars is None or sum(schema_chars(t.schema()) for t in others) <= budget_chars:
                offered = [*builtin, *(t.schema() for t in others)]
            else:
                present = {candidate.name: candidate for candidate in others}
                found = [present[name].schema() for name in self._found if name in present]
                offered = [*builtin, self.tool.schema(), *found]
            self._offered = (key, offered)
            return offered

    def deferring(self, budget_chars: int | None) -> bool:
        return any(schema.get("name") == SEARCH for schema in self.schemas(budget_chars))

    def cost(self) -> tuple[int, int]:
        """(how many extra tools, their schemas' estimated tokens): what /context shows."""
        others = [t for t in self._registry.extra_tools() if t.name != SEARCH]
        return len(others), sum(schema_chars(t.schema()) for t in others) // CHARS_PER_TOKEN

    def search(self, query: str, limit: int) -> str:
        others = [t for t in self._registry.extra_tools() if t.name != SEARCH]
        if query.startswith("select:"):
            wanted = [name.strip() for name in query[len("select:") :].split(",") if name.strip()]
            by_name = {candidate.name: candidate for candidate in others}
            unknown = [name for name in wanted if name not in by_name]
            if unknown:
                raise ToolError(f"No such tool: {', '.join(unknown)}. Search by what it does instead.")
            chosen = [by_name[name] for name in wanted][:MOST_FOUND]
        else:
            chosen = ranked(others, query)[: max(1, min(limit, MOST_FOUND))]
        if not chosen:
            return f"No tool matches {query!r}. Try other words (a server's name, a verb, an object)."
        with self._lock:
            for candidate in chosen:
                self._found.setdefault(candidate.name)
        lines = [f"- {t.name}: {_first_line(t.description)}" for t in chosen]
        return "These tools are available now; call them by name:\n" + "\n".join(lines)


def ranked(tools: list[Tool], query: str) -> list[Tool]:
    """Tools matching the query's words, best first: a word in the name counts thrice one in the description."""
    words = set(_words(query))
    scored = []
    for candidate in tools:
        name, described = set(_words(candidate.name)), set(_words(candidate.description))
        score = 3 * len(words & name) + len(words & described)
        if score:
            scored.append((-score, candidate.name, candidate))
    return [candidate for _, _, candidate in sorted(scored, key=lambda item: item[:2])]


def _words(text: str) -> list[str]:
    return [word for word in re.split(r"[^a-z0-9]+", text.lower()) if len(word) > 1]


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:200]


def _search_tool(deferred: DeferredTools) -> Tool:
    # No guidance in the system prompt: the tool is offered only while it is needed, and says it all itself.
    @tool(risk="read", guidance="", alias="MCPSearch", key_argument="query")
    def tool_search(ctx: ToolContext, query: str, limit: int = 5) -> ToolResult:
        """Find tools of the MCP servers that are not listed yet and make them available for the rest of the
        session: by what they do (e.g. "create issue github") or by name ("select:mcp__github__create_issue").
        Search before saying a tool does not exist.

        Args:
            query: Words for what the tool does, or `select:NAME,NAME` for tools whose names you know.
            limit: How many tools to return at most (1-20).
        """
        return ToolResult(deferred.search(query, limit))

    return tool_search
