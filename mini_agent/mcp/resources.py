"""MCP servers' resources offered to the model as Claude Code offers them (its ListMcpResourcesTool and
ReadMcpResourceTool): two tools, present while a ready server lists resources or resource templates.

`list_mcp_resources` reads the lists the servers gave when they connected (no call: a read). `read_mcp_resource`
asks a server for one URI, an outgoing call: the policy judges it as a call of that server's tool
`mcp__<server>__resources` (rules naming the server or that name apply, a user's server counts as read-only, a
project's asks; the URI passes the egress check). Text comes back XML-escaped inside an `<mcp_resource>` tag and
cut like read_file's output; an image blob through the image checks of tools/image_file.py; other blobs as a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mini_agent.tools.base import NetworkError, Tool, ToolContext, ToolError, ToolResult, truncate_middle
from mini_agent.xmltext import escape, quoteattr, system_hint

McpManager = Any
"""The session's mcp.manager.McpManager (not imported: it imports this module)."""

LIST_RESOURCES, READ_RESOURCE = "list_mcp_resources", "read_mcp_resource"
RESOURCES = "resources"
"""The tool name a resource read of server S is judged as: `mcp__S__resources`."""
OUTPUT_LIMIT = 100_000
"""Characters of text one read returns, as read_file's output at most."""


def judged_name(server: str) -> str:
    return f"mcp__{server}__{RESOURCES}"


@dataclass(frozen=True)
class ResourceTool(Tool):
    """One of the two resource tools; `manager` answers for the servers."""

    manager: Any = None

    def validate(self, arguments: object) -> dict:
        if not isinstance(arguments, dict):
            raise ToolError(f"Invalid arguments for {self.name}: expected a JSON object.")
        server = arguments.get("server")
        if server is not None and (not isinstance(server, str) or server not in self._servers()):
            known = ", ".join(self._servers()) or "none"
            raise ToolError(
                f"Invalid arguments for {self.name}: no MCP server {server!r} with resources (known: {known})."
            )
        if self.name == READ_RESOURCE:
            uri = arguments.get("uri")
            if server is None or not isinstance(uri, str) or not uri.strip():
                raise ToolError(f"Invalid arguments for {self.name}: `server` and `uri` (a string) are required.")
            return {"server": server, "uri": uri}
        return {} if server is None else {"server": server}

    def judged(self, arguments: dict) -> tuple[str, str, dict]:
        if self.name != READ_RESOURCE:
            return super().judged(arguments)
        server = arguments["server"]
        origin = self.manager.connections[server].server.origin
        return judged_name(server), "read" if origin == "user" else "mcp", {"uri": arguments["uri"]}

    def _servers(self) -> list[str]:
        return [name for name, connection in self.manager.connections.items() if connection.catalog.resources]


def resource_tools(manager: McpManager) -> list[Tool]:
    """The two tools, when some ready server lists resources; else none."""
    if not any(c.catalog.resources for c in manager.connections.values() if c.status == "ready"):
        return []
    server = {"type": "string", "description": "The MCP server's name (as in mcp__<server>__...)."}

    def list_resources(ctx: ToolContext, server: str | None = None) -> ToolResult:
        return ToolResult(listing(manager, server))

    def read_resource(ctx: ToolContext, server: str, uri: str) -> ToolResult:
        return read(manager, server, uri)

    common = dict(guidance="", validator=None, alias=None, key_argument=None, edits_files=False, manager=manager)
    return [
        ResourceTool(
            name=LIST_RESOURCES,
            description="List the resources (and resource templates) the connected MCP servers offer: their URIs, "
            "names and descriptions. Give `server` to list one server's only. Read one with read_mcp_resource.",
            input_schema={"type": "object", "properties": {"server": server}},
            fn=list_resources,  # type: ignore[arg-type]
            risk="read",
            **common,  # type: ignore[arg-type]
        ),
        ResourceTool(
            name=READ_RESOURCE,
            description="Read one resource of an MCP server by its URI (from list_mcp_resources; a template's "
            "{placeholders} filled in). Text comes back escaped inside an <mcp_resource> tag; images as images.",
            input_schema={
                "type": "object",
                "properties": {"server": server, "uri": {"type": "string", "description": "The resource's URI."}},
                "required": ["server", "uri"],
            },
            fn=read_resource,  # type: ignore[arg-type]
            risk="read",
            **common,  # type: ignore[arg-type]
        ),
    ]


def listing(manager: McpManager, only: str | None = None) -> str:
    """The resources of every ready server (or of `only`), escaped, one per line."""
    parts = []
    for name in sorted(manager.connections):
        connection = manager.connections[name]
        if (only is not None and name != only) or not connection.catalog.resources:
            continue
        lines = []
        for item in connection.catalog.resources:
            kind = "template " if item.template else ""
            mime = f" [{item.mime_type}]" if item.mime_type else ""
            about = f": {item.description}" if item.description else ""
            lines.append(escape(f"{kind}{item.uri} ({item.name}){mime}{about}"))
        state = "" if connection.status == "ready" else f" status={quoteattr(connection.status)}"
        parts.append(f"<mcp_resources server={quoteattr(name)}{state}>\n" + "\n".join(lines) + "\n</mcp_resources>")
    return truncate_middle("\n".join(parts), OUTPUT_LIMIT, _hint) or "No MCP server lists resources."


def read(manager: McpManager, server: str, uri: str) -> ToolResult:
    connection = manager.connections[server]
    try:
        result = connection.read_resource(uri)
    except ConnectionError as exc:
        raise NetworkError(f"MCP server {server} failed: {exc}") from None
    except Exception as exc:  # a protocol error the server answered with (unknown resource)
        raise ToolError(f"MCP server {server} could not read {uri}: {exc}") from None
    return converted(server, result)


def converted(server: str, result: Any) -> ToolResult:
    """A ReadResourceResult as the model reads it."""
    from mini_agent.mcp.tools import fitted_image

    texts: list[str] = []
    images: list[dict] = []
    for item in getattr(result, "contents", ()):
        mime = getattr(item, "mime_type", None) or ""
        attributes = f"server={quoteattr(server)} uri={quoteattr(str(item.uri))}"
        attributes += f" mime_type={quoteattr(mime)}" if mime else ""
        text = getattr(item, "text", None)
        if text is not None:
            texts.append(f"<mcp_resource {attributes}>\n{escape(text)}\n</mcp_resource>")
            continue
        blob = getattr(item, "blob", "") or ""
        image, problem = fitted_image(blob) if mime.startswith("image/") or not mime else (None, None)
        if image is not None:
            images.append(image.block())
            texts.append(f"<mcp_resource {attributes}>an image, attached</mcp_resource>")
        else:
            size = len(blob) * 3 // 4
            why = f": {problem}" if problem and mime.startswith("image/") else ""
            texts.append(
                f"<mcp_resource {attributes}>binary contents of about {size} bytes, not shown{why}</mcp_resource>"
            )
    text = truncate_middle("\n".join(texts), OUTPUT_LIMIT, _hint) or "The resource is empty."
    return ToolResult(text, blocks=tuple(images))


def _hint(omitted: int) -> str:
    return system_hint(
        "truncated",
        f"The text was cut: {omitted} characters in the middle were omitted.",
        omitted_chars=str(omitted),
    )
