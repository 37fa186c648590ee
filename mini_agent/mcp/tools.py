"""An MCP server's tools as registry tools: named `mcp__<server>__<tool>`, with the server's own description and
input schema, sorted so the `tools` request parameter is the same from request to request; and a call's result
turned into what the model reads: text, images as image blocks, resource links as lines, long text cut with
the same truncated hint as the built-in tools, an is_error result as a ToolError."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mini_agent.tools.base import NetworkError, Tool, ToolContext, ToolError, ToolResult, truncate_middle
from mini_agent.xmltext import system_hint

if TYPE_CHECKING:
    from mini_agent.mcp.connection import Connection, RemoteTool

OUTPUT_LIMIT = 30_000
"""Characters of text a call returns, as for bash: the middle of a longer one is cut."""
PREFIX = "mcp__"
"""What the Messages API accepts as an image block."""


def tool_name(server: str, tool: str) -> str:
    return f"{PREFIX}{server}__{tool}"


@dataclass(frozen=True)
class McpTool(Tool):
    """A tool of an MCP server. Its arguments are checked by the server, which knows its own schema."""

    server: str = ""
    remote: str = ""

    def validate(self, arguments: object) -> dict:
        if not isinstance(arguments, dict):
            raise ToolError(
                f"Invalid arguments for {self.name}: expected a JSON object, got {type(arguments).__name__}."
            )
        missing = [name for name in self.input_schema.get("required", ()) if name not in arguments]
        if missing:
            raise ToolError(f"Invalid arguments for {self.name}: missing required parameter '{missing[0]}'.")
        return arguments


def remote_tools(connection: Connection) -> list[McpTool]:
    """The registry tools of one ready server, sorted by name."""
    server = connection.server
    trusted_hint = server.origin == "user"  # a project's server could call any tool read-only
    return sorted(
        (_tool(connection, remote, trusted_hint and remote.read_only) for remote in connection.tools),
        key=lambda item: item.name,
    )


ORIGINAL_REQUEST_META = "mini-agent/original_request"
"""The `_meta` key of every tool call that carries the user's original request (secrets masked, at most
ORIGINAL_REQUEST_CHARS characters), as built-in tools and sub-agents get it: a server may read it to do what the
user meant, never to be told what to do by it."""
ORIGINAL_REQUEST_CHARS = 8_000


def request_meta(ctx: ToolContext) -> dict | None:
    if not ctx.request:
        return None
    masked = ctx.secrets.mask(ctx.request) if ctx.secrets is not None else ctx.request
    return {ORIGINAL_REQUEST_META: masked[:ORIGINAL_REQUEST_CHARS]}


def _tool(connection: Connection, remote: RemoteTool, read_only: bool) -> McpTool:
    def call(ctx: ToolContext, **arguments: Any) -> ToolResult:
        try:
            result = connection.call(remote.name, arguments, meta=request_meta(ctx))
        except ConnectionError as exc:
            raise NetworkError(f"MCP server {connection.server.name} failed: {exc}") from None
        except Exception as exc:  # a protocol error the server answered with (unknown tool, bad arguments)
            raise ToolError(f"MCP server {connection.server.name} refused the call: {exc}") from None
        return convert(result)

    schema = remote.input_schema if remote.input_schema.get("type") == "object" else {"type": "object"}
    description = remote.description or f"The {remote.name} tool of the MCP server {connection.server.name}."
    return McpTool(
        name=tool_name(connection.server.name, remote.name),
        description=description,
        input_schema=schema,
        fn=call,  # type: ignore[arg-type]
        guidance="",
        risk="read" if read_only else "mcp",  # type: ignore[arg-type]
        validator=None,
        # A server's tool has no Claude Code name, and which argument matters or what it changes is unknown: the
        # policy asks about it as an unknown risk, the undo snapshot is taken before it, its line shows the name.
        alias=None,
        key_argument=None,
        edits_files=False,
        server=connection.server.name,
        remote=remote.name,
    )


def convert(result: Any) -> ToolResult:
    """The SDK's CallToolResult as a ToolResult; isError becomes a ToolError the model reads."""
    texts: list[str] = []
    images: list[dict] = []
    for item in result.content:
        kind = getattr(item, "type", "")
        if kind == "text":
            texts.append(item.text)
        elif kind == "image":
            image, problem = fitted_image(item.data)
            if image is not None:
                images.append(image.block())
            else:
                texts.append(f"[an image of type {item.mime_type} the model cannot be shown: {problem}]")
        elif kind == "resource_link":
            title = f" {item.title or item.name}" if (item.title or item.name) else ""
            texts.append(f"resource:{title} {item.uri}" + (f" ({item.description})" if item.description else ""))
        elif kind == "resource":
            resource = item.resource
            body = getattr(resource, "text", None)
            texts.append(f"resource {resource.uri}:\n{body}" if body is not None else f"resource {resource.uri}")
        else:
            texts.append(f"[{kind or 'unknown'} content left out]")
    if not texts and getattr(result, "structured_content", None) is not None:
        texts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(texts)
    if result.is_error:
        raise ToolError(text or "The MCP tool reported an error without a message.")
    text = truncate_middle(text, OUTPUT_LIMIT, _hint)
    if not text and images:
        text = f"{len(images)} image{'s' if len(images) > 1 else ''}"
    return ToolResult(text, blocks=tuple(images))


def fitted_image(data: object):
    """A server's image checked and fitted like a file's (tools/image_file.py): decoded by its content, not its
    declared type, scaled to the API's limits; or why not. A hostile server's bomb is refused here."""
    import base64
    import binascii

    from mini_agent.tools import image_file

    if not isinstance(data, str) or len(data) > image_file.MAX_FILE_BYTES * 4 // 3 + 4:
        return None, "missing or too big"
    try:
        return image_file.load(base64.b64decode(data, validate=True)), None
    except (binascii.Error, ValueError):
        return None, "not valid base64"
    except image_file.ImageError as exc:
        return None, str(exc)


def _hint(omitted: int) -> str:
    return system_hint(
        "truncated",
        f"The tool's output was cut: {omitted} characters in the middle were omitted. Ask the tool for less "
        "(a narrower query, a page or a limit argument if it has one).",
        omitted_chars=str(omitted),
    )
