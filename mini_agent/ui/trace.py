"""Trace mode in words: what each source and enricher did, which blocks went in, which were dropped, why."""

from __future__ import annotations

from mini_agent.context.injection import TurnTrace
from mini_agent.events import CompactionReport, HookRan


def format_trace(trace: TurnTrace) -> list[str]:
    """Plain lines (no markup) for stderr or the REPL."""
    lines = [f"trace · original message (stored and sent unchanged): {_quote(trace.text)}"]
    for outcome in trace.outcomes:
        produced = f" → {', '.join(outcome.blocks)}" if outcome.blocks else ""
        reason = f"  {outcome.reason}" if outcome.reason else ""
        lines.append(
            f"  {outcome.kind:<8} {outcome.name:<22} {outcome.status:<8} {outcome.ms:7.1f} ms{produced}{reason}"
        )
    for placement in trace.placements:
        reason = f"  {placement.reason}" if placement.reason else ""
        lines.append(
            f"  block    {placement.name:<22} P{placement.priority} {placement.tokens:>7} tok  "
            f"{placement.status}{reason}"
        )
    lines.append(f"  injected {trace.injected_tokens} tokens (budget {trace.budget})")
    return lines


def format_compaction(report: CompactionReport) -> str:
    if not report.stages:
        why = report.error or "nothing older than the latest exchange to compact"
        return f"Compaction ({report.trigger}) did nothing: {why}."
    done = ", ".join(report.stages)
    failed = f" ({report.error})" if report.error else ""
    sizes = f"{report.before:,} → {report.after:,} tokens"
    return f"Compacted the conversation ({report.trigger}): {sizes}; {done}{failed}."


def format_hook(event: HookRan) -> str:
    ended = f"exit {event.exit_code}, " if event.exit_code is not None else ""
    subject = f" for {event.subject}" if event.subject else ""
    return f"trace · hook {event.hook}{subject} → {event.outcome} ({ended}{event.seconds:.2f} s)"


def _quote(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 3] + "...")
