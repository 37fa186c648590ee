"""`@server:uri` mentions (Claude Code's form, `@docs:notes://readme`): the MCP resource the user pointed at,
read from its server for the model before it has to ask. The human typed the URI, so no permission question;
only a ready server that lists resources is asked, within the context timeout like every enricher. Text comes
escaped (mcp/resources.py); an image or binary resource is named, not attached.
"""

from __future__ import annotations

from typing import Any

from mini_agent.context.blocks import P0, ContextBlock, Enricher, Skip, TurnInput
from mini_agent.context.enrich.mentions import RESOURCE_MENTION, find_mentions
from mini_agent.xmltext import escape

MAX_RESOURCE_MENTIONS = 5


def resource_mentions(text: str) -> list[tuple[str, str]]:
    found = (RESOURCE_MENTION.fullmatch(typed) for typed in find_mentions(text))
    return [(match.group("server"), match.group("uri")) for match in found if match]


def mcp_mentions(manager: Any) -> Enricher:
    """The enricher for one session's MCP servers."""

    def enrich(inp: TurnInput) -> list[ContextBlock]:
        from mini_agent.mcp.resources import read
        from mini_agent.tools.base import ToolError

        mentioned = [
            (server, uri)
            for server, uri in resource_mentions(inp.text)
            if server in manager.connections and manager.connections[server].catalog.resources
        ]
        if not mentioned:
            raise Skip("no @server:uri mentions of a server with resources")
        blocks = []
        for server, uri in mentioned[:MAX_RESOURCE_MENTIONS]:
            try:
                text = read(manager, server, uri).content
            except ToolError as exc:
                text = escape(f"@{server}:{uri}: not read: {exc}")
            blocks.append(ContextBlock(f"mcp_resource:{server}:{uri}", P0, text))
        return blocks

    return Enricher("mcp_mentions", enrich, needs="@")
