"""One turn of a script's run (-p, or each turn of --input-format stream-json): what the result counts and how
the turn ended."""

from __future__ import annotations

from dataclasses import dataclass

from mini_agent.agent import Agent, TurnResult
from mini_agent.errors import ExitStatus, MiniAgentError
from mini_agent.events import AssistantMessage, Emit, Event, SubAgentEvent, ToolDenied
from mini_agent.ui.render import denial_record
from mini_agent.ui.terminal_text import visible


class Tally:
    """Passes the core's events on to a renderer, counting what the result reports: the turn's model requests
    and its refused calls (a sub-agent's too)."""

    def __init__(self, render: Emit) -> None:
        self.render = render
        self.steps = 0
        self.denials: list[dict] = []

    def __call__(self, event: Event) -> None:
        if isinstance(event, AssistantMessage):
            self.steps = event.step
        elif isinstance(event, ToolDenied):
            self.denials.append(denial_record(event))
        elif isinstance(event, SubAgentEvent) and isinstance(event.event, ToolDenied):
            self.denials.append({**denial_record(event.event), "subagent": event.agent_id})  # a refusal all the same
        self.render(event)

    def next_turn(self) -> None:
        self.steps, self.denials = 0, []


@dataclass(frozen=True)
class Turn:
    """How one turn ended: its result (None when it raised), exit status and the error that stopped it."""

    result: TurnResult | None
    status: ExitStatus
    error: str | None = None

    @property
    def said(self) -> str | None:
        """The result's `error`: what stopped the turn, or why it ended without an answer (its notice is already
        on stderr)."""
        return self.error or (self.result.error if self.result is not None else None)


def take_turn(agent: Agent, tally: Tally, prompt: str, stdin: str | None = None, images: tuple = ()) -> Turn:
    """One turn of the agent, its exit status judged as a script reads it (a refused call: 4)."""
    try:
        result = agent.run_turn(prompt, stdin, images=images)
    except MiniAgentError as exc:
        return Turn(None, exc.exit_status, agent.settings.secret_set.mask(str(exc)))
    status = ExitStatus.ERROR if result.is_error else ExitStatus.DENIED if tally.denials else ExitStatus.SUCCESS
    return Turn(result, status)


def after_turn(sessions, err) -> None:
    """The session file's warning after a turn, if it has one, on stderr."""
    warning = sessions.after_turn()
    if warning:
        print(visible(f"mini-agent: {warning}"), file=err)
