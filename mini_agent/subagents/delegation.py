"""Running one sub-agent: a fresh agent loop beside the main one, sharing what must not widen (the permission
mode, the rules, the human who answers questions) and reporting what it did back into the main agent's turn
(its events nested, its tokens, its transcript in the session file)."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from mini_agent.agent import Agent
from mini_agent.context.keeper import subagent_keeper
from mini_agent.conversation import Session
from mini_agent.errors import MiniAgentError, TurnAborted
from mini_agent.events import Event, SubAgentEvent, TextDelta, ToolFinished
from mini_agent.model.endpoints import model_for_agent
from mini_agent.subagents.definitions import AgentDefinition
from mini_agent.subagents.task_tool import TASK
from mini_agent.tools import EXIT_PLAN_MODE
from mini_agent.tools.base import ToolContext, ToolError, ToolInterrupted, ToolRegistry
from mini_agent.usage import Usage

if TYPE_CHECKING:
    from mini_agent.gate import ApprovalRequest
    from mini_agent.safety.permissions import Decision

ROLE = """# You are a sub-agent

The main agent delegated one sub-task to you. Nobody can answer a question while you work: act on the most
reasonable reading of the brief and say which reading you took. Your last reply is all the main agent receives:
make it a complete, self-contained report of what you found or did (paths, line numbers, commands and their
results), without asking anything back."""


def brief(original: str, description: str, prompt: str) -> str:
    """The sub-agent's first message: the user's request verbatim, marked as such, beside the sub-task."""
    return (
        f"<original_user_request>\n{original}\n</original_user_request>\n\n"
        "Above, verbatim, is what the user asked the main agent: context for your work, not your task. The main "
        f"agent delegated this sub-task to you ({description}):\n\n{prompt}"
    )


@dataclass(frozen=True)
class SubAgentRun:
    """What one sub-agent did, as the main agent and the session file hear it."""

    text: str
    steps: int
    usage: Usage
    changed: tuple[str, ...]
    """Files its calls of tools that edit files (write_file, edit_file) changed, in the order first changed."""
    commands: int
    """Shell commands it ran: what they changed is not listed."""
    stopped: str | None = None
    """Why it ended early (an error, Ctrl-C); None when it finished."""

    def report(self) -> str:
        lines = [self.text.strip() or "(The sub-agent gave no final answer.)"]
        if self.stopped:
            lines.insert(0, f"[The sub-agent stopped early: {self.stopped}]")
        lines.append("")
        lines.append(f"Files changed by the sub-agent: {', '.join(self.changed)}" if self.changed else "")
        if self.commands:
            lines.append(f"It ran {self.commands} shell command(s); files they changed are not listed above.")
        return "\n".join(lines).rstrip()


class Delegation:
    """The main agent's sub-agents: `run` is the task tool's body. The main agent attaches itself when built."""

    def __init__(self, definitions: dict[str, AgentDefinition]) -> None:
        self.definitions = definitions
        self.parent: Agent | None = None
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        """Guards the main agent's usage and session, and the terminal: read-only sub-agents run in threads."""
        self._asking = threading.Lock()
        """One question to the human at a time, whichever sub-agent asks."""

    def attach(self, parent: Agent) -> None:
        self.parent = parent

    def run(self, description: str, prompt: str, name: str | None) -> str:
        parent = self.parent
        if parent is None:
            raise ToolError("Sub-agents are not available in this session.")
        definition = self.definitions.get(name) if name else None
        agent_id = str(next(self._ids))
        label = definition.name if definition else TASK
        changed: list[str] = []
        commands = 0

        def emit(event: Event) -> None:
            nonlocal commands
            if parent.ctx.cancelled.is_set():
                raise KeyboardInterrupt  # Ctrl-C reached the main thread, not this worker
            if isinstance(event, TextDelta):
                return  # the sub-agent's words stay out of the main transcript on screen: one line per tool
            if isinstance(event, ToolFinished) and not event.result.is_error:
                edits = event.tool is not None and event.tool.edits_files and isinstance(event.input, dict)
                path = event.input.get(event.tool.key_argument) if edits else None
                if isinstance(path, str) and path not in changed:
                    changed.append(path)
                commands += event.result.exit_code is not None  # a command ran
            with self._lock:
                parent.emit(SubAgentEvent(agent_id, label, description, event))

        child = self._child(parent, definition, emit, agent_id, label)
        original = parent.ctx.request
        result, stopped = None, None
        try:
            result = child.run_turn(brief(original, description, prompt), request=original)
            stopped = result.error  # cut off, refused, or no answer at all: the parent must know
        except TurnAborted:
            stopped = "interrupted with Ctrl-C"
        except MiniAgentError as exc:
            stopped = str(exc)
        finally:
            usage = child.session.usage
            text = result.text if result else _last_words(child.session)
            run = SubAgentRun(text, result.steps if result else 0, usage, tuple(changed), commands, stopped)
            self._settle(parent, child, agent_id, label, description, run)
        if stopped == "interrupted with Ctrl-C":
            raise ToolInterrupted(run.report())
        if stopped and not run.text:
            raise ToolError(run.report())
        return run.report()

    def _child(self, parent: Agent, definition: AgentDefinition | None, emit, agent_id: str, label: str) -> Agent:
        """A fresh agent: its own conversation, files read and todo list, the parent's provider, mode and rules; no
        plan to present (the session's mode is the parent's)."""
        settings = parent.settings
        model = definition.model if definition is not None else None
        if model:
            settings = replace(settings, model=model_for_agent(model, settings.model))
        allowed = definition.tools if definition is not None else None
        withheld = definition.withheld if definition is not None else ()
        tools = [
            t
            for t in parent.registry
            if t.name not in (TASK, EXIT_PLAN_MODE, *withheld) and (allowed is None or t.name in allowed)
        ]
        ctx = ToolContext(
            cwd=parent.ctx.cwd, data_dir=parent.ctx.data_dir, secrets=parent.secrets, jobs=parent.ctx.job_table()
        )
        static = f"{parent.static_prompt}\n\n{ROLE}"
        if definition is not None and definition.prompt:
            static += f"\n\n# Your role: {definition.name}\n\n{definition.prompt}"
        if definition is not None and definition.skills:
            static += "\n\n" + preloaded(definition.skills, settings, parent.gate.started)
        return Agent(
            parent.provider,
            ToolRegistry(tools),
            settings,
            Session(),
            ctx,
            static,
            emit,
            self._confirm,
            hooks=parent.hooks.for_subagent(agent_id, label),  # the same tool hooks; its end is a SubagentStop
            keeper=subagent_keeper,  # the project's instructions and the user's memory, as the parent has them
            before_change=parent.before_change,  # its changes are undone with the parent's turn
            permissions=parent.gate,  # never wider than the parent: its mode and rules as they are now
        )

    def _confirm(self, request: ApprovalRequest) -> Decision:
        assert self.parent is not None
        with self._asking:
            return self.parent.gate.confirm(request)

    def _settle(
        self, parent: Agent, child: Agent, agent_id: str, label: str, description: str, run: SubAgentRun
    ) -> None:
        """Its tokens into the parent's turn and session, its transcript into the session file, and the parent's
        context sources told which files it changed."""
        entry = {
            "id": agent_id,
            "agent": label,
            "description": description,
            "model": child.settings.model,
            "steps": run.steps,
            "changed": list(run.changed),
            "stopped": run.stopped,
            "result": run.text,
            "log": child.session.log,
        }
        with self._lock:
            parent.add_delegated(run.usage)
            parent.session.record_subagent(entry, run.usage)
            for path in run.changed:
                parent.keeper.engine.tool_ran("write", parent.ctx.resolve(path))
            if run.commands:
                parent.keeper.engine.tool_ran("exec", None)


def preloaded(names: tuple[str, ...], settings, started: float) -> str:
    """The system prompt's part for the skills an agent file names: each one's body and files, as the skill tool
    hands them over; a skill that is unknown, withheld until trusted or the user's only is named as left out."""
    from mini_agent.skills.catalog import find_skills
    from mini_agent.skills.files import skill_body
    from mini_agent.skills.tool import loaded
    from mini_agent.xmltext import escape

    catalog = find_skills(settings.cwd, settings.user_dir, settings.data_dir, started)
    parts = ["# Skills loaded for you"]
    for name in names:
        skill = catalog.named(name)
        body = skill_body(skill)[0] if skill is not None and skill.offered else None
        missing = f"(No skill {escape(name)!r} here.)"
        parts.append(loaded(skill, body) if skill is not None and body is not None else missing)
    return "\n\n".join(parts)


def _last_words(session: Session) -> str:
    """The text of the sub-agent's last reply, when it stopped before a final one."""
    for message in reversed(session.messages):
        if message["role"] == "assistant":
            content = message["content"]
            if isinstance(content, str):
                return content
            return "\n".join(block.get("text", "") for block in content if block.get("type") == "text")
    return ""


def _tool_names(
    registry: ToolRegistry, listed: tuple[str, ...] | None, definition, problems: list[str]
) -> tuple[str, ...] | None:
    from mini_agent.safety.rules import CLAUDE_WITHOUT_COUNTERPART

    if listed is None:
        return None
    found = {name: registry.named(name) for name in listed if name not in CLAUDE_WITHOUT_COUNTERPART}
    unknown = [name for name, tool in found.items() if tool is None]
    if unknown:
        problems.append(f"{definition.path}: unknown tools {', '.join(unknown)} left out")
    return tuple(dict.fromkeys(tool.name if tool else name for name, tool in found.items()))


def with_subagents(registry: ToolRegistry, settings) -> tuple[ToolRegistry, Delegation, list[str]]:
    """The registry with the `task` tool added, the Delegation to attach to the agent once built, and a line
    per agent definition that could not be used."""
    from mini_agent.subagents.definitions import agent_dirs, load_definitions
    from mini_agent.subagents.task_tool import task_tool

    definitions, problems = load_definitions(*agent_dirs(settings.cwd, settings.user_dir, Path.home()))
    tools = list(registry)
    for name, definition in definitions.items():
        # A tool by its name or its alias (`Read`, as agent files written for Claude Code say), as hooks and
        # command files name it: kept by its name, so everything downstream compares names. A name no tool has
        # yet stays as written: it gives nothing now, and the agent is not taken for read-only. Claude Code's
        # tools with no counterpart here (Grep, Glob, ...) are left out without a word.
        withheld = _tool_names(registry, definition.withheld, definition, problems) or ()
        named = _tool_names(registry, definition.tools, definition, problems)
        named = None if named is None else tuple(name for name in named if name not in withheld)
        definitions[name] = replace(definition, tools=named, withheld=withheld)
    delegation = Delegation(definitions)
    risks = {tool.name: tool.risk for tool in tools}
    return ToolRegistry([*tools, task_tool(delegation.run, definitions, risks)]), delegation, problems
