"""The line after each REPL turn: tokens in and out, cache share, cost, and how full the context window is.

On a narrow terminal whole parts give way, the least needed first (cost, cache share, tokens out, tokens in),
so the context share, which says when to /compact, stays to the last; only then is anything cut."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mini_agent.model.pricing import cost

if TYPE_CHECKING:
    from mini_agent.agent import TurnResult
    from mini_agent.conversation import Session

GIVE_WAY = ("cost", "cached", "out", "in")
"""The order in which parts are left out when the line does not fit."""


def status_parts(result: TurnResult, session: Session, window: int, size: int, model: str) -> dict[str, str]:
    """The parts of the line by name, in the order shown; `size`: the tokens the context holds now."""
    usage = result.usage
    read = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    parts = {"in": f"{short_count(read)} in", "out": f"{short_count(usage.output_tokens)} out"}
    if read:
        parts["cached"] = f"{usage.cache_read_input_tokens / read:.0%} cached"
    turn_cost, session_cost = cost(model, usage), session_spent(session, model)
    if turn_cost is not None and session_cost is not None:
        parts["cost"] = f"{dollars(turn_cost)} ({dollars(session_cost)} session)"
    if window:
        parts["ctx"] = f"ctx {size / window:.0%} of {short_count(window)}"
    return parts


def session_spent(session: Session, model: str) -> float | None:
    """The session's cost, each model's usage at its own prices (a /model switch does not re-price what came
    before; a sub-agent of its own model is priced at it); None when no model used has a price."""
    by_model = session.usage_by_model or {model: session.usage}
    spent = (cost(name or model, usage) for name, usage in by_model.items())  # unnamed: the model in use
    known = [money for money in spent if money is not None]
    return sum(known) if known else None


def fitted(parts: dict[str, str], width: int, separator: str) -> str:
    """The parts joined, leaving out whole parts in GIVE_WAY order until the line fits `width` cells; the
    context share is shortened (`ctx 45%`, `45%`). The caller cuts what even that leaves too wide."""
    from rich.cells import cell_len

    shown = dict(parts)
    for name in GIVE_WAY:
        if cell_len(separator.join(shown.values())) <= width or len(shown) == 1:
            break
        shown.pop(name, None)
    line = separator.join(shown.values())
    if list(shown) == ["ctx"]:
        share = line.split(" of ")[0]  # `ctx 45%`, then `45%`
        for shorter in (share, share.removeprefix("ctx ")):
            if cell_len(line) > width:
                line = shorter
    return line


def short_count(count: int) -> str:
    """1234 -> 1.2k, 123456 -> 123k, 1234567 -> 1.2M."""
    for unit, size in (("M", 1_000_000), ("k", 1000)):
        if count >= size:
            value = count / size
            return f"{value:.0f}{unit}" if value >= 100 else f"{value:.1f}".removesuffix(".0") + unit
    return str(count)


def dollars(amount: float) -> str:
    """Three significant digits below a dollar, cents above."""
    return f"${amount:.2f}" if amount >= 1 else f"${amount:.3g}" if amount >= 0.001 else f"${amount:.4f}"
