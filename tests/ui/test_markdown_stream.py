"""Streamed Markdown: blocks committed once and intact, the live tail redrawn cheaply, plain text without a TTY."""

from __future__ import annotations

import io
import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console
from support.terminal import screen

from mini_agent.ui.markdown_blocks import BlockSplitter
from mini_agent.ui.markdown_stream import MarkdownStream, markdown

DOC = """# Release notes

The parser now streams. It keeps **finished** blocks
and redraws only the last one.

- first item
- second item with `code`

1. one
2. two

```python
def f(x):

    return x * 2
```

| name | size |
|------|------|
| a    | 1    |

> a quoted line

Setext heading
--------------

***

## The end
Closing words.
"""


def squeezed(lines: list[str]) -> list[str]:
    """Runs of blank lines as one, none at either end: spacing between blocks is one blank line, however
    rich pads a table or a list at the start of a document."""
    kept = [line for index, line in enumerate(lines) if line or (index and lines[index - 1])]
    while kept and not kept[0]:
        kept.pop(0)
    while kept and not kept[-1]:
        kept.pop()
    return kept


def terminal(width: int = 60, height: int = 12, **options) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=width, height=height, force_terminal=True, color_system=None, **options), out


def every_call_redraws():
    ticks = itertools.count()
    return lambda: float(next(ticks))


def stream(text: str, pieces: list[str], console: Console, clock=None) -> MarkdownStream:
    renderer = MarkdownStream(console, clock=clock or every_call_redraws())
    for piece in pieces:
        renderer.feed(piece)
    renderer.finish()
    return renderer


def chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def whole(text: str, width: int = 60) -> list[str]:
    console, out = terminal(width)
    console.print(markdown(text))
    return screen(out.getvalue())


def test_blocks_split_at_blank_lines_headings_rules_and_closing_fences():
    splitter = BlockSplitter()
    blocks = [block for piece in chunks(DOC, 5) for block in splitter.feed(piece)] + splitter.finish()
    assert blocks == [
        "# Release notes",
        "The parser now streams. It keeps **finished** blocks\nand redraws only the last one.",
        "- first item\n- second item with `code`",
        "1. one\n2. two",
        "```python\ndef f(x):\n\n    return x * 2\n```",
        "| name | size |\n|------|------|\n| a    | 1    |",
        "> a quoted line",
        "Setext heading\n--------------",
        "***",
        "## The end",
        "Closing words.",
    ]


def test_a_list_item_continued_after_a_blank_line_stays_one_block():
    splitter = BlockSplitter()
    text = "- item\n\n  more of the item\n\n  ```\n  code\n\n  more code\n  ```\nafter\n"
    assert splitter.feed(text) + splitter.finish() == [
        "- item\n\n  more of the item\n\n  ```\n  code\n\n  more code\n  ```\nafter"
    ]


def test_an_unclosed_fence_is_one_block_at_the_end():
    splitter = BlockSplitter()
    assert splitter.feed("```\na\n\n# not a heading\n") == []
    assert splitter.finish() == ["```\na\n\n# not a heading"]


def test_streamed_screen_matches_the_document_printed_at_once():
    console, out = terminal()
    stream(DOC, chunks(DOC, 7), console)
    shown = screen(out.getvalue())
    assert squeezed(shown) == squeezed(whole(DOC))
    assert shown[-1] == ""  # ends on a fresh line


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(DOC) - 1), max_size=40, unique=True))
def test_where_the_deltas_split_the_text_does_not_change_the_screen(cuts):
    bounds = [0, *sorted(cuts), len(DOC)]
    console, out = terminal()
    stream(DOC, [DOC[a:b] for a, b in itertools.pairwise(bounds)], console)
    assert squeezed(screen(out.getvalue())) == squeezed(whole(DOC))


def test_each_block_is_in_the_scrollback_once_and_the_code_block_is_intact():
    console, out = terminal()
    renderer = stream(DOC, chunks(DOC, 3), console)
    shown = screen(out.getvalue())
    for marker in ("Release notes", "first item", "def f(x):", "a quoted line", "Closing words."):
        assert sum(marker in line for line in shown) == 1, marker
    code = shown.index(next(line for line in shown if "def f(x):" in line))
    assert [line.strip() for line in shown[code : code + 3]] == ["def f(x):", "", "return x * 2"]
    assert renderer.stats.committed <= len(DOC)


def test_work_per_delta_follows_the_current_block_not_the_reply():
    blocks = [f"Paragraph {n:03} " + "word " * (n % 7 * 5 + 5) for n in range(300)]
    text = "\n\n".join(blocks) + "\n"
    console, _ = terminal(width=80, height=24)
    renderer = MarkdownStream(console, clock=every_call_redraws())
    largest = max(len(block) for block in blocks)
    costs = []
    for piece in chunks(text, 13):
        before = renderer.stats.rendered, renderer.stats.scanned
        renderer.feed(piece)
        costs.append((renderer.stats.rendered - before[0], renderer.stats.scanned - before[1]))
    renderer.finish()
    assert renderer.stats.redraws >= len(costs) // 2
    # A delta renders at most the block it completed plus the block in progress, and scans itself and the line
    # it completed: bounds from the size of a block, the same for the 1st delta and the 1000th.
    assert max(rendered for rendered, _ in costs) <= 2 * largest + 2 * 13
    assert max(scanned for _, scanned in costs) <= largest + 2 * 13
    third = len(costs) // 3
    assert max(costs[-third:]) <= max(costs[:third])  # the end of the reply costs no more than its start


def test_a_huge_block_in_progress_is_redrawn_from_its_tail_only():
    console, out = terminal(width=80, height=24)
    renderer = MarkdownStream(console, clock=every_call_redraws())
    budget = 80 * 23 + 201  # the screen, plus a fence's opening line
    paragraph = "lorem ipsum dolor " * 12_000  # ~216 KB without a line break
    code = "```\n" + "".join(f"line {n} = {n * n}\n" for n in range(12_000)) + "```\n"
    for reply in (paragraph, code):
        renderer.stats.rendered = renderer.stats.committed = 0
        redrawn = []
        for piece in chunks(reply, 1000):
            before = renderer.stats.rendered - renderer.stats.committed
            renderer.feed(piece)
            redrawn.append(renderer.stats.rendered - renderer.stats.committed - before)
        renderer.finish()
        assert max(redrawn) <= budget
        assert renderer.stats.committed == len(reply.rstrip("\n"))  # once, when the block was complete
    assert [line.strip() for line in screen(out.getvalue()) if line][-1] == "line 11999 = 143976001"


def test_code_lines_wider_than_a_narrow_terminal_are_cut_not_wrapped():
    text = "Some prose that is long enough to wrap across several narrow lines.\n\n```\n" + "x" * 100 + "\n```\n"
    console, out = terminal(width=40)
    stream(text, chunks(text, 9), console)
    shown = [line for line in screen(out.getvalue()) if line]
    assert all(cell_len(line) <= 40 for line in shown)
    assert shown[-1].endswith("…") and shown[-1].lstrip().startswith("xxx")


def test_without_a_terminal_the_text_is_written_as_it_comes():
    out = io.StringIO()
    renderer = MarkdownStream(Console(file=out, width=60))
    written = []
    for piece in chunks(DOC.rstrip("\n"), 11):
        renderer.feed(piece)
        written.append(out.getvalue())
    renderer.finish()
    assert written[0] == DOC[:11]
    assert out.getvalue() == DOC


def test_a_dumb_terminal_gets_plain_text_too(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    console, out = terminal()
    stream(DOC, chunks(DOC, 11), console)
    assert out.getvalue() == DOC


def test_no_color_means_no_colour_codes(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    out = io.StringIO()
    console = Console(file=out, width=60, height=12, force_terminal=True, color_system="truecolor")
    stream(DOC, chunks(DOC, 7), console)
    codes = re.findall(r"\x1b\[([0-9;]*)m", out.getvalue())
    colours = [code for code in codes if re.search(r"(^|;)(3[0-9]|4[0-9]|9[0-7]|10[0-7])(;|$)", code)]
    assert codes and not colours  # bold and the like stay; colour goes


def test_an_ascii_console_gets_ascii_and_never_raises():
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii", errors="strict", write_through=True)
    console = Console(file=out, width=60, height=12, force_terminal=True, color_system=None)
    text = DOC + "\nCafé — “quotes” and an ellipsis…\n"
    stream(text, chunks(text, 7), console)
    shown = screen(raw.getvalue().decode("ascii"))
    assert " * first item" in shown
    assert any(line.startswith("| a quoted line") for line in shown)
    assert any("Caf? ? ?quotes? and an ellipsis." in line for line in shown)


def test_one_blank_line_between_a_code_block_and_what_follows():
    console, out = terminal()
    stream("```python\nx = 1\n```\nDone.\n", ["```python\nx = 1\n```\nDone.\n"], console)
    assert [line.strip() for line in screen(out.getvalue())] == ["x = 1", "", "Done.", ""]


def test_a_discarded_reply_leaves_only_what_had_reached_the_scrollback():
    console, out = terminal()
    renderer = MarkdownStream(console, clock=every_call_redraws())
    for piece in ("# Title\n", "\nwords that ", "were cut"):
        renderer.feed(piece)
    renderer.discard()
    renderer.feed("Again, in full.")
    renderer.finish()
    assert [line.strip() for line in screen(out.getvalue()) if line] == ["Title", "Again, in full."]


SPACED = """Intro.


---

| a | b |
|---|---|
| 1 | 2 |

1. first

2. loose second

   continued

```
code
```


# End
"""


def test_headings_are_on_the_left_like_the_text_under_them():
    console, out = terminal(width=60)
    text = "# Release notes\n\nBody text.\n\n## Details\n\nMore.\n"
    stream(text, chunks(text, 5), console)
    shown = screen(out.getvalue())
    assert "Release notes" in shown and "Details" in shown  # rstripped lines: nothing before the words either


def test_ordered_lists_keep_the_numbers_and_delimiters_written():
    console, out = terminal(width=60)
    text = "3. three\n4. four\n\n7) seven\n10) ten\n\n1. same\n1. number\n"
    stream(text, chunks(text, 4), console)
    shown = [line for line in screen(out.getvalue()) if line]
    assert shown == [" 3. three", " 4. four", "  7) seven", " 10) ten", " 1. same", " 1. number"]


def test_a_long_numbered_item_wraps_under_its_text_not_under_its_number():
    console, out = terminal(width=20)
    stream("12. one two three four five six\n", ["12. one two three four five six\n"], console)
    first, second, *_ = [line for line in screen(out.getvalue()) if line]
    assert first.startswith(" 12. one") and second.startswith("     ") and second.strip()


def test_inline_code_has_no_background_and_a_palette_colour():
    out = io.StringIO()
    console = Console(file=out, width=60, height=12, force_terminal=True, color_system="256")
    stream("Run `make test` now.\n", ["Run `make test` now.\n"], console)
    painted = re.search(r"\x1b\[([0-9;]*)m(make test)\x1b\[0m", out.getvalue())
    assert painted, out.getvalue()
    codes = painted.group(1).split(";")
    assert not any(re.fullmatch(r"4[0-9]|10[0-7]", code) for code in codes)  # no background of any kind
    assert "36" in codes  # cyan from the terminal's own palette, which its theme keeps legible
    assert console.get_style("markdown.code").bgcolor is not None  # the console's own theme is left as it was


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=len(SPACED) - 1), max_size=30, unique=True))
def test_never_two_blank_lines_in_a_row(cuts):
    bounds = [0, *sorted(cuts), len(SPACED)]
    console, out = terminal(width=40, height=40)
    stream(SPACED, [SPACED[a:b] for a, b in itertools.pairwise(bounds)], console)
    shown = screen(out.getvalue())[:-1]  # the last is the fresh line the cursor waits on
    assert all(shown[i] or shown[i + 1] for i in range(len(shown) - 1)), shown
    assert "Intro." in shown and " a  b" in shown and "End" in shown


def test_blocks_render_with_the_collector_paused_and_leave_it_as_it_was(monkeypatch):
    """Rendering is a burst of short-lived tokens and segments: collections during it only re-walk the tokens still
    in use (gc_pause.held). Every rendering, committed or live, runs with the collector off; it is on after."""
    import gc

    console, _ = terminal()
    collector_on_while_rendering: list[bool] = []
    render_lines = console.render_lines

    def spied(renderable, *args, **kwargs):
        if type(renderable).__name__ == "StreamedMarkdown":  # not the live region's own layout of those lines
            collector_on_while_rendering.append(gc.isenabled())
        return render_lines(renderable, *args, **kwargs)

    monkeypatch.setattr(console, "render_lines", spied)
    assert gc.isenabled()
    stream(DOC, chunks(DOC, 40), console)
    assert collector_on_while_rendering and not any(collector_on_while_rendering)
    assert gc.isenabled()
