"""Rendering a streamed Markdown reply: a 1 MB reply in 10,000 deltas through MarkdownStream, and half of it."""

from __future__ import annotations

import itertools
import os
import random
import time

from _common import Row, failed_row, median, seconds

TARGET = 2.0
LINEAR_RATIO = 2.4
"""1 MB over 0.5 MB: 2 is linear; the first 20 KB of code are syntax-highlighted, which costs more, so a
quadratic renderer would show 4 and a linear one a little under 2."""
DELTAS_PER_MB = 10_000
STREAM_PACE = 0.02
"""Seconds between deltas on the simulated clock of the paced row: 50 deltas a second, a fast model."""
WORDS = (
    "the stream commits each finished block once and redraws only the block in progress so the cost of a "
    "delta follows the block not the reply **bold** *emphasis* `inline code` [a link](https://example.com)"
).split()


def render_rows(runs: int) -> list[Row]:
    try:
        full = _times(1_000_000, runs, paced=False)
        half = _times(500_000, runs, paced=False)
        paced = _times(1_000_000, runs, paced=True)
        reference = _rich_at_once(1_000_000)
    except Exception as exc:
        return [failed_row("Render a 1 MB Markdown reply in 10,000 deltas", f"< {TARGET} s", str(exc))]
    ratio = full / half
    streamed = DELTAS_PER_MB * STREAM_PACE
    return [
        Row(
            "Render a 1 MB Markdown reply in 10,000 deltas (MarkdownStream, terminal console to /dev/null)",
            f"{seconds(full)} (0.5 MB in 5,000 deltas: {seconds(half)}; ratio {ratio:.2f})",
            f"< {TARGET} s, ratio < {LINEAR_RATIO}",
            full < TARGET and ratio < LINEAR_RATIO,
        ),
        Row(
            "Same, paced: a redraw every 5 deltas (simulated clock, 50 deltas/s)",
            f"{seconds(paced)} = {paced / streamed:.1%} of the {streamed:.0f} s the stream lasts",
            "— (reported)",
            None,
        ),
        Row("Reference: rich's stock Markdown printing the same 1 MB at once", seconds(reference), "—", None),
    ]


def reply(size: int) -> str:
    """Deterministic Markdown of about `size` characters: paragraphs, lists, code blocks and headings."""
    chance = random.Random(5)

    def words(count: int) -> str:
        return " ".join(chance.choice(WORDS) for _ in range(count))

    blocks: list[str] = []
    total = 0
    for number in itertools.count():
        kind = number % 6
        if kind == 0:
            block = f"## Section {number}"
        elif kind in (1, 4):
            block = "\n".join(words(12) for _ in range(5))
        elif kind == 2:
            block = "\n".join(f"- {words(9)}" for _ in range(6))
        elif kind == 3:
            body = "\n".join(f"def step_{number}_{n}(value):\n    return value * {n} + {number}\n" for n in range(5))
            block = f"```python\n{body}```"
        else:
            block = "\n".join(f"{n}. {words(7)}" for n in range(1, 5))
        blocks.append(block)
        total += len(block) + 2
        if total >= size:
            break
    return "\n\n".join(blocks)[:size] + "\n"


def _times(size: int, runs: int, paced: bool) -> float:
    text = reply(size)
    step = -(-len(text) // (DELTAS_PER_MB * size // 1_000_000))
    deltas = [text[i : i + step] for i in range(0, len(text), step)]
    return median([_stream(deltas, paced) for _ in range(runs)])


def _stream(deltas: list[str], paced: bool) -> float:
    from mini_agent.ui.markdown_stream import MarkdownStream
    from mini_agent.ui.terminal_text import terminal_console

    with open(os.devnull, "w") as sink:  # the REPL's console, which shows control characters instead of sending them
        console = terminal_console(file=sink, width=100, height=40, force_terminal=True, color_system="truecolor")
        ticks = itertools.count()
        clock = (lambda: next(ticks) * STREAM_PACE) if paced else time.monotonic
        stream = MarkdownStream(console, clock=clock)
        started = time.perf_counter()
        for delta in deltas:
            stream.feed(delta)
        stream.finish()
        elapsed = time.perf_counter() - started
    if stream.stats.committed < sum(map(len, deltas)) * 0.99:
        raise RuntimeError(f"only {stream.stats.committed} of {sum(map(len, deltas))} characters were committed")
    return elapsed


def _rich_at_once(size: int) -> float:
    from rich.console import Console
    from rich.markdown import Markdown

    text = reply(size)
    with open(os.devnull, "w") as sink:
        console = Console(file=sink, width=100, height=40, force_terminal=True, color_system="truecolor")
        started = time.perf_counter()
        console.print(Markdown(text))
        return time.perf_counter() - started
