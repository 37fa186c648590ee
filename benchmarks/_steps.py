"""Per-step client overhead in process: from a tool's end to the next request reaching the loopback model."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from _common import FakeAnthropicAPI, Row, answer, bench_settings, failed_row, median, millis, tool_use

from mini_agent.agent import Agent
from mini_agent.conversation import Session
from mini_agent.events import ToolFinished
from mini_agent.model import AnthropicProvider
from mini_agent.prompt import static_prompt
from mini_agent.safety.permissions import Allow
from mini_agent.tools import default_tools
from mini_agent.tools.base import ToolContext, ToolRegistry, tool

STEP_TARGET = 0.04
SIZES = (("~0", 0), ("~10k", 10_000), ("~150k", 150_000))
"""History sizes in tokens, at about 4 characters a token."""
MESSAGE_CHARS = 2_000


@tool(risk="read", guidance="A benchmark probe: returns a constant.")
def probe(ctx: ToolContext, key: str) -> str:
    """Return a constant.

    Args:
        key: Anything.
    """
    return "ok"


def history(tokens: int) -> list[dict]:
    """Alternating user/assistant text messages of ~2k characters, ending with an assistant message."""
    count = (tokens * 4) // MESSAGE_CHARS
    count += count % 2  # an even count starts with user and ends with assistant
    messages = []
    for index in range(count):
        role = "user" if index % 2 == 0 else "assistant"
        line = f"Message {index} from the {role}: the quick brown fox jumps over the lazy dog. "
        body = (line * (MESSAGE_CHARS // len(line) + 1))[:MESSAGE_CHARS]
        messages.append({"role": role, "content": [{"type": "text", "text": body}]})
    return messages


def _gaps(tokens: int, steps: int) -> tuple[list[float], float]:
    """Run one turn of `steps` probe calls; the per-step gaps, and the fake's JSON parse time of the last body."""
    api = FakeAnthropicAPI().start()
    try:
        usage = {"input_tokens": max(tokens, 100), "output_tokens": 20}
        api.script(
            *(answer(tool_use("probe", {"key": str(i)}), usage=usage) for i in range(steps)),
            answer("Done.", usage=usage),
        )
        finished: list[float] = []

        def emit(event) -> None:
            if isinstance(event, ToolFinished):
                finished.append(time.monotonic())

        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-") as tmp:
            settings = bench_settings(api.url, Path(tmp), steps + 5)
            registry = ToolRegistry([*default_tools(), probe])
            agent = Agent(
                AnthropicProvider(settings),
                registry,
                settings,
                Session(messages=history(tokens)),
                ToolContext(cwd=Path(tmp)),
                static_prompt(),
                emit,
                lambda request: Allow(),
            )
            result = agent.run_turn("Call the probe tool, then say done.")
        posts = [r for r in api.requests if r.method == "POST" and r.path.startswith("/v1/messages")]
        if result.text != "Done." or len(posts) != steps + 1 or len(finished) != steps:
            raise RuntimeError(f"unexpected run: {len(posts)} requests, {len(finished)} tool calls, {result.text!r}")
        api.assert_complete()
        raw = json.dumps(posts[-1].body).encode()
        parse = []
        for _ in range(5):
            started = time.monotonic()
            json.loads(raw)
            parse.append(time.monotonic() - started)
        return [posts[i + 1].at - finished[i] for i in range(steps)], median(parse)
    finally:
        api.stop()


def step_overhead(steps: int) -> list[Row]:
    rows = []
    medians: dict[int, float] = {}
    target = f"< {STEP_TARGET * 1000:.0f} ms"
    for label, tokens in SIZES:
        name = f"Per-step overhead, {label} token history"
        try:
            gaps, parse = _gaps(tokens, steps)
        except Exception as exc:
            rows.append(failed_row(name, target, f"{type(exc).__name__}: {exc}"))
            continue
        value = medians[tokens] = median(gaps)
        detail = f"{millis(value)} (max {millis(max(gaps))}; includes the fake's JSON parse, {millis(parse)}"
        if tokens == SIZES[-1][1] and SIZES[1][1] in medians:
            detail += f"; {(value - medians[SIZES[1][1]]) * 1000:+.1f} ms vs {SIZES[1][0]}"
        detail += ")"
        rows.append(Row(name, detail, target, value < STEP_TARGET))
    return rows
