"""The `task` tool the model sees: its schema names the agents on offer, its body hands the call to a runner."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from mini_agent.subagents.definitions import AgentDefinition
from mini_agent.tools.base import Tool, ToolContext, ToolError, tool

TASK = "task"
READ_ONLY_RISKS = frozenset({"read"})

GUIDANCE = """Hand a self-contained sub-task to a sub-agent: a fresh agent with its own context and step budget,
the same permissions as yours (never more), and the user's original request shown to it verbatim. Use it for a
broad search or investigation whose details would clutter this conversation, or for an independent piece of
work; not for a single read or command you can do yourself. Write `prompt` as a complete brief (what to do,
where, what to report back): the sub-agent does not see this conversation. It returns its final answer and the
files it changed; check what it reports before relying on it. Several task calls in one reply run side by side
when their agents are read-only. Sub-agents cannot start sub-agents."""

Runner = Callable[[str, str, str | None], str]
"""(description, prompt, agent name or None) -> the sub-agent's report; raises ToolError."""


def task_tool(run: Runner, definitions: Mapping[str, AgentDefinition], risks: Mapping[str, str]) -> Tool:
    """The tool, with the named agents in its description and an enum on `agent`; `risks` maps each tool the
    sub-agents may use to its risk, to tell which agents are read-only (they may run side by side)."""

    def task(ctx: ToolContext, description: str, prompt: str, agent: str | None = None) -> str:
        """Delegate a self-contained sub-task to a sub-agent and get back its final answer and changed files.

        Args:
            description: A short label for the sub-task (3-6 words), shown to the user.
            prompt: The complete brief for the sub-agent: what to do, where, and what to report back.
            agent: A named agent to run instead of the general-purpose one.
        """
        if agent is not None and agent not in definitions:
            names = ", ".join(definitions) or "none are defined"
            raise ToolError(f"No agent named {agent!r}; the named agents are: {names}. Omit `agent` for a general one.")
        return run(description, prompt, agent)

    built = tool(risk="read", guidance=GUIDANCE, alias="Task", key_argument="description")(task)
    schema = built.input_schema
    description = built.description
    if definitions:
        lines = [f"- {name}: {definition.description}" for name, definition in definitions.items()]
        description += "\n\nNamed agents (pass the name as `agent`):\n" + "\n".join(lines)
        agent_field = {**schema["properties"]["agent"], "enum": list(definitions)}
        schema = {**schema, "properties": {**schema["properties"], "agent": agent_field}}
    else:  # nothing to choose from: the parameter would only invite made-up names
        properties = {key: value for key, value in schema["properties"].items() if key != "agent"}
        schema = {**schema, "properties": properties}

    def side_by_side(arguments: dict) -> bool:
        return read_only(definitions.get(arguments.get("agent") or ""), risks)

    return replace(built, description=description, input_schema=schema, concurrent=side_by_side)


def read_only(definition: AgentDefinition | None, risks: Mapping[str, str]) -> bool:
    """Whether an agent can only read: a named one whose every tool has the read risk (the general agent and an
    agent without a tools list get every tool, so they are not)."""
    if definition is None or definition.tools is None:
        return False
    return all(risks.get(name) in READ_ONLY_RISKS for name in definition.tools if name != TASK)
