"""MCP servers' prompts as slash commands, in Claude Code's form `/mcp__<server>__<prompt> [arguments]`.

Arguments are given by name (`focus=speed`) or in order of the prompt's declared arguments (shell-style quoting
groups words; the last declared argument takes what is left over, so `/mcp__s__review fix the parser` gives a
one-argument prompt the whole text). The server's messages become one user turn: each message's text XML-escaped
inside an `<mcp_prompt>` tag (an assistant message marked as such), and every `@` written as `&#64;`, so a
server's text can neither close the tag nor have the agent attach a local file with an `@path` mention.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mini_agent.errors import ConfigError
from mini_agent.mcp.catalog import RemotePrompt
from mini_agent.xmltext import escape, quoteattr

if TYPE_CHECKING:
    from mini_agent.mcp.manager import McpManager

PREFIX = "/mcp__"


def command_name(server: str, prompt: str) -> str:
    return f"{PREFIX}{server}__{prompt}"


@dataclass(frozen=True)
class PromptCommand:
    server: str
    prompt: RemotePrompt

    @property
    def name(self) -> str:
        return command_name(self.server, self.prompt.name)

    @property
    def usage(self) -> str:
        shown = [argument.name if argument.required else f"[{argument.name}]" for argument in self.prompt.arguments]
        return " ".join([self.name, *shown])

    @property
    def summary(self) -> str:
        return (self.prompt.description or f"the prompt {self.prompt.name} of the MCP server {self.server}") + (
            f" (MCP {self.server})"
        )


def commands(manager: McpManager | None) -> list[PromptCommand]:
    """Every prompt of every server that has listed them, sorted by name."""
    if manager is None:
        return []
    found = [
        PromptCommand(name, prompt)
        for name, connection in sorted(manager.connections.items())
        for prompt in connection.catalog.prompts
    ]
    return sorted(found, key=lambda command: command.name)


def find(manager: McpManager | None, line: str) -> tuple[PromptCommand, str] | None:
    """The prompt command a line names and its argument text, or None."""
    name, _, rest = line.strip().partition(" ")
    if not name.startswith(PREFIX):
        return None
    for command in commands(manager):
        if command.name == name:
            return command, rest.strip()
    return None


def named_server(line: str) -> str | None:
    """The server a `/mcp__<server>__<prompt>` line names, or None."""
    if not line.startswith(PREFIX):
        return None
    server, separator, _ = line[len(PREFIX) :].partition("__")
    return server if separator and server else None


def wait_and_expand(manager: McpManager, line: str, timeout: float) -> Expanded:
    """A prompt command's turn, its server waited for first (up to `timeout`: it may still be starting)."""
    server = named_server(line)
    connection = manager.connections.get(server) if server else None
    if connection is not None and connection.status in ("pending", "starting"):
        connection.wait_ready(timeout)
    found = find(manager, line)
    if found is None:
        why = f": {connection.error}" if connection is not None and connection.error else ""
        raise ConfigError(f"No MCP prompt {line.split()[0]}{why}. /mcp lists each server's prompts.")
    return expand(manager, *found)


def arguments(command: PromptCommand, text: str) -> dict[str, str]:
    """The prompt's arguments from what was typed; ConfigError names what is missing or unknown."""
    declared = [argument.name for argument in command.prompt.arguments]
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    named: dict[str, str] = {}
    positional: list[str] = []
    for word in words:
        key, equals, value = word.partition("=")
        if equals and key in declared:
            named[key] = value
        else:
            positional.append(word)
    free = [name for name in declared if name not in named]
    if positional and not free:
        raise ConfigError(f"{command.name} takes no more arguments (usage: {command.usage}).")
    for index, name in enumerate(free):
        if index >= len(positional):
            break
        last = index == len(free) - 1
        named[name] = " ".join(positional[index:]) if last else positional[index]
    missing = [item.name for item in command.prompt.arguments if item.required and item.name not in named]
    if missing:
        raise ConfigError(f"{command.name} needs {', '.join(missing)} (usage: {command.usage}).")
    return named


@dataclass(frozen=True)
class Expanded:
    shown: str
    """The messages' plain text, for the human (through the terminal sanitiser)."""
    turn: str
    """The user turn the model gets: escaped, inside an `<mcp_prompt>` tag."""


def expand(manager: McpManager, command: PromptCommand, text: str) -> Expanded:
    """The user turn the prompt stands for: asked of its server now. ConfigError when it cannot be."""
    given = arguments(command, text)
    connection = manager.connections[command.server]
    try:
        result = connection.get_prompt(command.prompt.name, given)
    except ConnectionError as exc:
        raise ConfigError(f"MCP server {command.server} failed: {exc}") from None
    except Exception as exc:  # the server answered with an error (a bad argument)
        raise ConfigError(f"MCP server {command.server} refused the prompt {command.prompt.name}: {exc}") from None
    return expanded(command, result)


def expanded(command: PromptCommand, result: Any) -> Expanded:
    shown, parts = [], []
    for message in getattr(result, "messages", ()):
        text = _content_text(message.content)
        body = escape(text).replace("@", "&#64;")
        if message.role == "assistant":
            body = f"<assistant_message>{body}</assistant_message>"
            text = f"(assistant) {text}"
        parts.append(body)
        shown.append(text)
    attributes = f"server={quoteattr(command.server)} name={quoteattr(command.prompt.name)}"
    return Expanded("\n\n".join(shown), f"<mcp_prompt {attributes}>\n" + "\n\n".join(parts) + "\n</mcp_prompt>")


def _content_text(content: Any) -> str:
    kind = getattr(content, "type", "")
    if kind == "text":
        text = content.text
    elif kind == "resource":
        resource = content.resource
        body = getattr(resource, "text", None)
        text = f"resource {resource.uri}:\n{body}" if body is not None else f"[resource {resource.uri}, binary]"
    else:
        text = f"[{kind or 'unknown'} content left out]"
    return text
