"""`/context` and `/cost`: where the context window goes, and what the session has cost."""

from __future__ import annotations

import json
from dataclasses import dataclass

from mini_agent.context.blocks import is_injected
from mini_agent.context.tokens import count, image_cost, message_text

BAR_WIDTH = 40


@dataclass(frozen=True)
class Part:
    name: str
    tokens: int


def context_parts(agent) -> tuple[list[Part], int]:
    """Token counts per part of the next request, and the window they share."""
    system = agent._system_blocks()
    segments = [count(block["text"]) for block in system]
    tools = count(json.dumps(agent.registry.schemas(agent.schema_budget()), ensure_ascii=False))
    injected = typed = 0
    for message in agent.session.messages:
        content = message["content"]
        if isinstance(content, list) and message["role"] == "user":
            for block in content:
                tokens = count(message_text({"content": [block]}))
                if is_injected(block):
                    injected += tokens
                else:
                    typed += tokens
        else:
            typed += count(message_text(message))
    names = ("system: instructions", "system: tool guidance", "system: runtime hints")
    parts = [Part(name, tokens) for name, tokens in zip(names, segments, strict=False)]
    parts += [Part("tool schemas", tools), Part("messages", typed), Part("injected context", injected)]
    images = sum(image_cost(message) for message in agent.session.messages)
    if images:  # by the API's rule (width × height / 750), not by the size of their base64
        parts.append(Part("images", images))
    return parts, agent.window()


def context_lines(agent, ascii_only: bool = False) -> list[str]:
    parts, window = context_parts(agent)
    used = sum(part.tokens for part in parts)
    measured = agent.session.last_usage.context_tokens if agent.session.last_usage else None
    full, empty = ("#", ".") if ascii_only else ("█", "░")
    filled = min(BAR_WIDTH, round(BAR_WIDTH * used / window)) if window else 0
    lines = [f"{full * filled}{empty * (BAR_WIDTH - filled)}  {used:,} of {window:,} tokens ({used / window:.1%})"]
    width = max(len(part.name) for part in parts)
    for part in parts:
        lines.append(f"  {part.name:<{width}}  {part.tokens:>9,}")
    lines.append(f"  {'free space':<{width}}  {max(0, window - used):>9,}")
    lines.append(f"  (the window of {window:,} tokens is from {agent.window_source()})")
    lines += mcp_schema_lines(agent)
    if measured is not None:
        lines.append(f"  (the last reply's usage put the conversation at {measured:,} tokens)")
    lines.append(memory_line(agent.settings.user_dir))
    from mini_agent.context.instruction_text import summary_lines

    lines += summary_lines(agent.ctx.cwd, agent.settings.user_dir, agent.keeper.started, agent.settings.data_dir)
    return lines


def mcp_schema_lines(agent) -> list[str]:
    """What the MCP servers' tool schemas would cost each request, and whether they are found on demand."""
    deferred = agent.registry.deferred
    if deferred is None:
        return []
    tools, tokens = deferred.cost()
    if not tools:
        return []
    budget = agent.schema_budget()
    if deferred.deferring(budget):
        found = len(agent.registry.schemas(budget)) - len(agent.registry.builtin_schemas()) - 1
        return [
            f"  (MCP tools: {tools}, ~{tokens:,} tokens of schemas, over {agent.settings.mcp_schema_share:.0%} of "
            f"the window: found on demand with tool_search; {found} found so far)"
        ]
    return [f"  (MCP tools: {tools}, ~{tokens:,} tokens of schemas, all sent with each request)"]


def memory_line(user_dir) -> str:
    from mini_agent.context.memory import memory_path, notes

    saved = notes(user_dir)
    if not saved:
        return f'  user memory: none yet ({memory_path(user_dir)}; /memory add NOTE or "remember ...")'
    last = saved[-1] if len(saved[-1]) <= 60 else saved[-1][:59] + "…"
    return f"  user memory: {len(saved)} line(s) in {memory_path(user_dir)}, the last: {last}"


def cost_lines(usage, by_model: dict) -> list[str]:
    """Tokens of `usage`, and money: each model's tokens at its prices (a session may have switched models)."""
    from mini_agent.model.pricing import cost

    lines = [
        f"input {usage.input_tokens:,} · output {usage.output_tokens:,} · "
        f"cache read {usage.cache_read_input_tokens:,} · cache written {usage.cache_creation_input_tokens:,}"
    ]
    total_input = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
    if total_input:
        lines.append(f"cache hit share {usage.cache_read_input_tokens / total_input:.0%}")
    spent = {model: cost(model, part) for model, part in by_model.items() if part.context_tokens}
    if not spent:  # nothing spent yet: the model's prices, at zero
        spent = {model: cost(model, part) for model, part in list(by_model.items())[-1:]}
    unknown = [model or "an unnamed model" for model, money in spent.items() if money is None]
    if unknown:
        lines.append(f"cost unknown: no prices for {', '.join(unknown)}")
    elif len(spent) > 1:
        parts = ", ".join(f"{model} ${money:.4f}" for model, money in spent.items())
        lines.append(f"cost ${sum(spent.values()):.4f} ({parts})")
    elif spent:
        ((model, money),) = spent.items()
        lines.append(f"cost ${money:.4f} ({model})")
    return lines
