"""Hooks at start-up: the user's run; a project's run only once trusted (the same question and the same trust
file as a project's MCP servers: its hooks are commands a cloned repository would run as the user)."""

from __future__ import annotations

import sys
from typing import TextIO

from mini_agent.hooks import Hooks, ProjectHooks
from mini_agent.settings import Settings
from mini_agent.trust import TrustStore
from mini_agent.ui.terminal_text import visible
from mini_agent.ui.trust_question import ask_to_trust, not_trusted_why

TRUST_FLAG = "--trust-project-hooks"
TRUST_KEY = "trust_project_hooks = true"


def prepare(settings: Settings, can_ask: bool, err: TextIO | None = None) -> Hooks | None:
    """The session's hooks, or None when there are none to run; an untrusted project's are left out, with a notice."""
    err = err or sys.stderr
    allowed = [hook for hook in settings.hooks if hook.origin == "user"]
    project = tuple(hook for hook in settings.hooks if hook.origin == "project")
    if project:
        sources = ", ".join(dict.fromkeys(hook.source for hook in project))  # .mini-agent/ and .claude/ files
        group, store = ProjectHooks(project, sources), TrustStore(settings.data_dir)
        if settings.trust_project_hooks or store.trusted(group):
            allowed += project
        elif can_ask and _ask(group, err):
            store.trust(group)
            allowed += project
        else:
            why = not_trusted_why(can_ask, TRUST_FLAG, TRUST_KEY)
            print(visible(f"mini-agent: the project's hooks ({group.source}) do not run: {why}."), file=err)
    return Hooks(allowed, settings.cwd) if allowed else None


def describe_session(hooks: Hooks, sessions) -> None:
    """Before the agent is built with them (which binds them to its events, secrets and mode): the hooks
    describe its session, and like the commands the agent runs, they do not inherit the model key."""
    from mini_agent.processes.run import child_environment

    hooks.environment = child_environment
    hooks.transcript = lambda: (sessions.session_id, sessions.transcript_path)


def _ask(group: ProjectHooks, err: TextIO) -> bool:
    heading = f"The project's config ({group.source}) defines hooks, which run on the agent's events:"
    return ask_to_trust(err, heading, [hook.summary() for hook in group.hooks], "Trust and run them?")
