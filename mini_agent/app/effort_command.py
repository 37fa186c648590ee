"""`/effort [level]`: how hard the model thinks from the next turn on, and what the endpoint is sent for it."""

from __future__ import annotations

from mini_agent.settings import EFFORT_LEVELS


def effort_command(repl, argument: str) -> None:
    from rich.markup import escape

    from mini_agent.ui.terminal_text import visible

    for line in effort_lines(repl.agent, argument):
        repl.console.print(escape(visible(line)), highlight=False)


def effort_lines(agent, argument: str) -> list[str]:
    """Set the level when `argument` names one; the lines say the level, what it sends, and the choices."""
    argument = argument.strip().lower()
    if argument and argument not in EFFORT_LEVELS:
        return [f"Unknown effort {argument!r}; use one of {', '.join(EFFORT_LEVELS)}."]
    if argument:
        agent.set_effort(argument)
    level = agent.settings.effort
    lines = [f"effort {level}: {sent(agent, level)}"]
    if not argument:
        lines.append(f"choices: {' | '.join(EFFORT_LEVELS)} (budgets: {budgets()})")
    return lines


def sent(agent, level: str) -> str:
    """What `level` puts in each request to the model in use."""
    if level == "off":
        return "nothing is sent (the endpoint's own default)"
    support = agent.provider.thinking_support()
    if getattr(agent.provider, "thinking", None) is not None and agent.provider.thinking.refused:
        return "nothing: the endpoint refused thinking earlier in this session"
    from mini_agent.model.thinking import BUDGETS, plan

    chosen = plan(support, level, agent.output_limit())
    if not chosen.fields:
        return f"nothing ({support.why})"
    if support.kind == "adaptive":
        effort = chosen.fields.get("output_config", {}).get("effort", "its default")
        return f"adaptive thinking at effort {effort} ({support.why})"
    return f"a thinking budget of {BUDGETS[level]:,} tokens ({support.why})"


def budgets() -> str:
    from mini_agent.model.thinking import BUDGETS

    return ", ".join(f"{level} {tokens:,}" for level, tokens in BUDGETS.items())
