"""The three kinds of command and the verdict a rule gives: a kind with the sentence that explains it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Kind = Literal["read-only", "ordinary", "destructive"]
SEVERITY: dict[Kind, int] = {"read-only": 0, "ordinary": 1, "destructive": 2}


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    reason: str
    """A short sentence for the human, e.g. "force-push rewrites remote history"."""


def read_only(reason: str) -> Verdict:
    return Verdict("read-only", reason)


def ordinary(reason: str) -> Verdict:
    return Verdict("ordinary", reason)


def destructive(reason: str) -> Verdict:
    return Verdict("destructive", reason)


def worst(verdicts: Iterable[Verdict]) -> Verdict | None:
    """The most severe verdict, the first one among equals; None when there is none."""
    chosen: Verdict | None = None
    for verdict in verdicts:
        if chosen is None or SEVERITY[verdict.kind] > SEVERITY[chosen.kind]:
            chosen = verdict
    return chosen
