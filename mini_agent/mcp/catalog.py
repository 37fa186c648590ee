"""What an MCP server offers beside its tools, as it lists them at connect time: its resources, its resource
templates and its prompts (typed, cut to sane sizes: a hostile server's list must not flood a turn). Run on the
connection's loop (connection.py); a server that lists none, or fails to list them, offers none.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_LISTED = 500
"""Resources, templates or prompts kept per server: more than anyone reads, fewer than a flood."""
TEXT_LIMIT = 300
"""Characters kept of a name, URI or description a server lists."""


@dataclass(frozen=True)
class RemoteResource:
    uri: str
    name: str
    description: str = ""
    mime_type: str = ""
    template: bool = False
    """A resource template (`uri` is an RFC 6570 template such as `file:///{path}`), not a resource."""


@dataclass(frozen=True)
class PromptArgument:
    name: str
    description: str = ""
    required: bool = False


@dataclass(frozen=True)
class RemotePrompt:
    name: str
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()


@dataclass(frozen=True)
class Catalog:
    resources: tuple[RemoteResource, ...] = ()
    prompts: tuple[RemotePrompt, ...] = ()


def _cut(text: object) -> str:
    return str(text or "")[:TEXT_LIMIT]


async def list_catalog(session, capabilities) -> Catalog:
    """The resources (templates after them) and prompts a server says it has; an error in one list leaves it
    empty: a server whose tools work is not failed for a broken extra."""
    resources: list[RemoteResource] = []
    prompts: list[RemotePrompt] = []
    if getattr(capabilities, "resources", None) is not None:
        try:
            for item in await _pages(session.list_resources, "resources"):
                resources.append(
                    RemoteResource(_cut(item.uri), _cut(item.name), _cut(item.description), _cut(item.mime_type))
                )
        except Exception:  # noqa: BLE001 - see the docstring
            pass
        try:
            for item in await _pages(session.list_resource_templates, "resource_templates"):
                resources.append(
                    RemoteResource(
                        _cut(item.uri_template),
                        _cut(item.name),
                        _cut(item.description),
                        _cut(item.mime_type),
                        template=True,
                    )
                )
        except Exception:  # noqa: BLE001
            pass
    if getattr(capabilities, "prompts", None) is not None:
        try:
            for item in await _pages(session.list_prompts, "prompts"):
                arguments = tuple(
                    PromptArgument(_cut(argument.name), _cut(argument.description), bool(argument.required))
                    for argument in (item.arguments or ())
                )
                prompts.append(RemotePrompt(_cut(item.name), _cut(item.description), arguments))
        except Exception:  # noqa: BLE001
            pass
    return Catalog(tuple(resources[:MAX_LISTED]), tuple(sorted(prompts[:MAX_LISTED], key=lambda item: item.name)))


async def _pages(method, field: str) -> list:
    from mcp.types import PaginatedRequestParams

    items: list = []
    cursor = None
    while len(items) < MAX_LISTED:
        listed = await method(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(listed, field))
        cursor = listed.next_cursor
        if not cursor:
            break
    return items
