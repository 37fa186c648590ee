"""The three-segment system prompt: static instructions, tool guidance from the registry, runtime hints."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from mini_agent.xmltext import system_hint

if TYPE_CHECKING:
    from mini_agent.tools.base import ToolRegistry

TOOLS_HEADING = "# Tools: how to use them well"
RUNTIME_HEADING = "# Runtime state"
CACHE_BREAKPOINT = {"type": "ephemeral"}


@lru_cache(maxsize=1)
def static_prompt() -> str:
    """Segment 1: SYSTEM_PROMPT.md, shipped in the wheel; a source checkout reads it from the repository root."""
    from importlib.resources import files

    packaged = files("mini_agent") / "SYSTEM_PROMPT.md"
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8").strip()
    return (Path(__file__).resolve().parent.parent / "SYSTEM_PROMPT.md").read_text(encoding="utf-8").strip()


def build_system(static: str, registry: ToolRegistry, hints: dict[str, str]) -> list[dict]:
    """System blocks: static instructions, tool guidance (cache breakpoint), runtime hints when there are any.

    The breakpoint sits after segment 2, so a hint that comes and goes never invalidates the cached prefix.
    """
    blocks: list[dict] = [
        {"type": "text", "text": static},
        {
            "type": "text",
            "text": f"\n---\n\n{TOOLS_HEADING}\n\n{registry.guidance()}",
            "cache_control": CACHE_BREAKPOINT,
        },
    ]
    if hints:
        body = "\n\n".join(hints[key] for key in sorted(hints))
        blocks.append({"type": "text", "text": f"\n---\n\n{RUNTIME_HEADING}\n\n{body}"})
    return blocks


def render_system(blocks: list[dict]) -> str:
    """The system prompt as the model reads it: the blocks' text joined."""
    return "\n".join(block["text"] for block in blocks)


NON_INTERACTIVE = system_hint(
    "non_interactive",
    "This is a one-shot run: nobody can answer a question before it ends. Where the task is unclear, act on the "
    "most reasonable reading of it, say which reading you took, and finish; do not end by asking.",
)
"""The hint a one-shot run adds to segment 3; the REPL keeps "when the intent is unclear, ask"."""


def plan_mode_hint() -> str:
    """The hint segment 3 carries while the session is in plan mode: the model hears it is planning before a
    refusal tells it, and how planning ends."""
    from mini_agent.tools import EXIT_PLAN_MODE

    return system_hint(
        "plan_mode",
        "Plan mode is on: the user wants a plan before anything changes. Investigate with read-only tools (files "
        "are not written and commands that change things are refused), then call "
        f"{EXIT_PLAN_MODE} with the plan. The user approves it, and the session leaves plan mode so you carry it "
        "out at once, or says what to change. A question that needs no change is just answered.",
    )
