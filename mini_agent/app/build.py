"""The one builder of the main agent: everything it runs with is passed in when it is made, nothing is assigned
to it afterwards.

`launch` prepares what needs the terminal or starts early (the provider, the trust questions for a project's
MCP servers and hooks, the session file to continue); `AgentBuilder` then makes the agent from those parts,
complete: its tools with the `skill` tool (the skills on offer) and the `task` tool and the sub-agents behind
it, the context keeper, the hooks, the MCP servers, the undo snapshot and its session. One-shot runs build at
once; the REPL builds behind its first prompt (agent_build.py). Sub-agents are agents made by the same
constructor (subagents/delegation.py), and what changes during a session (the mode, the model, the
conversation) changes through one method of the agent each.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mini_agent.settings import Settings

if TYPE_CHECKING:
    from mini_agent.agent import Agent
    from mini_agent.app.lifecycle import SessionLifecycle
    from mini_agent.context.keeper import ContextKeeper
    from mini_agent.events import Emit
    from mini_agent.gate import Confirm
    from mini_agent.hooks import Hooks
    from mini_agent.mcp.manager import McpManager
    from mini_agent.model import Provider


@dataclass
class AgentBuilder:
    """The parts `launch` prepared; calling it with the front end's `emit` and `confirm` makes the agent."""

    settings: Settings
    provider: Provider
    sessions: SessionLifecycle | None = None
    """The session file and undo: the agent is given its conversation and takes undo snapshots through it."""
    servers: McpManager | frozenset[str] | None = None
    """The MCP servers' manager; or, for the REPL, the names of the project servers its trust screen left out,
    and the build makes the manager (`mcp`), behind the prompt; None without servers."""
    hooks: Hooks | None = None
    one_shot: bool = False
    """Nobody to ask (a hint tells the model so), and the first request lists the tools of the MCP servers
    ready by then (mcp_timeout); the REPL's first request comes when the human has typed it."""

    def __call__(self, emit: Emit, confirm: Confirm) -> Agent:
        # Imported here: the REPL builds its agent behind the first prompt, which must not wait for these.
        from mini_agent.agent import Agent
        from mini_agent.conversation import Session
        from mini_agent.events import Notice
        from mini_agent.hooks import NO_HOOKS
        from mini_agent.prompt import NON_INTERACTIVE, static_prompt
        from mini_agent.skills.tool import with_skills
        from mini_agent.subagents.delegation import with_subagents
        from mini_agent.tools import default_tools
        from mini_agent.tools.base import ToolContext

        settings, sessions = self.settings, self.sessions
        tools, skills = with_skills(default_tools(), settings, time.time())
        registry, delegation, problems = with_subagents(tools, settings)
        hooks = self.hooks
        if hooks is not None and sessions is not None:
            from mini_agent.app import hooks_setup

            hooks_setup.describe_session(hooks, sessions)
        agent = Agent(
            self.provider,
            registry,
            settings,
            Session(),
            ToolContext(cwd=settings.cwd),
            static_prompt(),
            emit,
            confirm,
            keeper=context_keeper,
            hooks=hooks or NO_HOOKS,
            mcp=self.mcp(),
            before_change=sessions.before_change if sessions is not None else None,
            delegation=delegation,
            run_hints={"non_interactive": NON_INTERACTIVE} if self.one_shot else None,
        )
        if agent.mcp is not None:
            from mini_agent.app import mcp_setup

            mcp_setup.join(agent, agent.mcp)
            if self.one_shot:
                mcp_setup.wait_for_servers(agent, agent.mcp, settings.mcp_timeout)
        for problem in problems:
            emit(Notice(f"Agent definition not used: {problem}"))
        for problem in skills.problems:
            emit(Notice(f"Skill: {problem}"))
        if sessions is not None:
            sessions.attach(agent)
        if not self.one_shot:  # the first turn's git status, asked while it is typed
            agent.keeper.prefetch(agent.ctx.cwd)
        return agent

    def mcp(self) -> McpManager | None:
        """The servers' manager, made on first use from the trust screen's answer."""
        if isinstance(self.servers, frozenset):
            from mini_agent.app import mcp_setup

            self.servers = mcp_setup.manager_for(self.settings, self.servers)
        return self.servers


def context_keeper(agent) -> ContextKeeper:
    """The full context machinery: every source and enricher, compaction with the configured model."""
    from mini_agent.context.compaction import Compactor
    from mini_agent.context.enrich import default_enrichers
    from mini_agent.context.gather import Gatherer
    from mini_agent.context.injection import ContextEngine
    from mini_agent.context.keeper import ContextKeeper
    from mini_agent.context.sources import default_sources

    settings = agent.settings
    enrichers = default_enrichers()
    if agent.mcp is not None:  # `@server:uri` mentions of its servers' resources
        from mini_agent.context.enrich.mcp_mentions import mcp_mentions

        enrichers.append(mcp_mentions(agent.mcp))
    gatherer = Gatherer(default_sources(), enrichers, settings.context_timeout)
    model = settings.compact_model or settings.model
    hooks = agent.hooks
    compactor = Compactor(
        agent.provider, model, settings.compact_focus, before=hooks.before_compaction, after=hooks.after_compaction
    )
    engine = ContextEngine(gatherer, settings.context_budget)
    return ContextKeeper(engine, compactor, settings, agent.input_window, agent.overhead, images=True)
