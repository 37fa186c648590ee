"""Per turn: gather blocks, fit them to the budget, send only what is new or changed, and trace all of it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mini_agent.context.blocks import P0, ContextBlock, Ledger, TurnInput, fit
from mini_agent.context.gather import Gatherer, Outcome

Placed = Literal["injected", "unchanged", "dropped"]


@dataclass(frozen=True)
class Placement:
    """What became of one block this turn."""

    name: str
    priority: int
    tokens: int
    status: Placed
    reason: str = ""

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "priority": f"P{self.priority}",
            "tokens": self.tokens,
            "status": self.status,
            "reason": self.reason,
        }


@dataclass
class TurnTrace:
    """Everything the agent added to one turn and why: the trace mode's record."""

    text: str
    """The user's message, as typed: it is stored and sent unchanged."""
    budget: int = 0
    outcomes: list[Outcome] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)
    compactions: list[dict] = field(default_factory=list)

    @property
    def injected_tokens(self) -> int:
        return sum(p.tokens for p in self.placements if p.status == "injected")

    def to_dict(self) -> dict:
        return {
            "original": self.text,
            "budget_tokens": self.budget,
            "injected_tokens": self.injected_tokens,
            "sources": [o.to_dict() for o in self.outcomes if o.kind == "source"],
            "enrichers": [o.to_dict() for o in self.outcomes if o.kind == "enricher"],
            "blocks": [p.to_dict() for p in self.placements],
            "compactions": self.compactions,
        }


@dataclass(frozen=True)
class Prepared:
    send: list[ContextBlock]
    """Blocks to add beside the user's text, in order."""
    trace: TurnTrace
    over_budget: bool
    """The P0 blocks alone exceed the budget: compact the conversation before sending them."""


class ContextEngine:
    def __init__(self, gatherer: Gatherer, budget_share: float) -> None:
        self.gatherer, self.budget_share = gatherer, budget_share
        self.ledger = Ledger()
        self.p0: list[ContextBlock] = []
        """This turn's P0 blocks: shown again at the top of a compacted view."""

    def prepare(self, inp: TurnInput, window: int) -> Prepared:
        blocks, outcomes = self.gatherer.gather(inp)
        budget = int(window * self.budget_share)
        fitted = fit(blocks, budget)
        dropped = {id(block) for block in fitted.dropped}
        self.p0 = [block for block in fitted.kept if block.priority == P0]
        send: list[ContextBlock] = []
        placements: list[Placement] = []
        for block in blocks:
            if id(block) in dropped:
                reason = f"over the {budget}-token budget (P2 goes before P1)"
                placements.append(Placement(block.name, block.priority, block.tokens, "dropped", reason))
            elif self.ledger.is_new(block):
                send.append(block)
                placements.append(Placement(block.name, block.priority, block.tokens, "injected"))
            else:
                placements.append(
                    Placement(block.name, block.priority, block.tokens, "unchanged", "already in the conversation")
                )
        trace = TurnTrace(inp.text, budget, outcomes, placements)
        return Prepared(send, trace, fitted.over_budget)

    def sent(self, blocks: list[ContextBlock]) -> None:
        for block in blocks:
            self.ledger.mark(block)

    def compacted(self) -> None:
        """The older blocks left the model's view; this turn's P0 blocks were shown again with the summary."""
        self.ledger.forget()
        self.sent(self.p0)

    def tool_ran(self, risk: str, changed: Path | None = None) -> None:
        self.gatherer.invalidate(risk, changed)
