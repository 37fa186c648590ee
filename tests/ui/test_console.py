"""The REPL renderer: one line per tool call, the status line, the spinner, and terminals that are narrow,
colourless or not UTF-8."""

from __future__ import annotations

import io
import re

import pytest
from rich.cells import cell_len
from rich.console import Console
from support.terminal import screen

from mini_agent.agent import TurnResult
from mini_agent.context.injection import Placement, TurnTrace
from mini_agent.context.reports import ContextInjected
from mini_agent.conversation import Session
from mini_agent.events import (
    AssistantMessage,
    Compacted,
    CompactionReport,
    Notice,
    ReplyDiscarded,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from mini_agent.tools import default_tools
from mini_agent.tools.base import ToolResult
from mini_agent.ui.console import ReplRenderer
from mini_agent.usage import Usage

LONG_COMMAND = "pytest -x tests/test_markdown_stream.py tests/test_console.py --maxfail=3 -q"
DIFF = "Edited a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-old line\n+new line\n context\n"


def finished(name: str, arguments: dict, content: str, is_error: bool = False, duration: float = 0.4) -> ToolFinished:
    """A finished call; a command's result carries the exit code its last line states, as the bash tool's does."""
    code = re.search(r"exit code: (\d+)$", content) if name == "bash" else None
    result = ToolResult(content, is_error=is_error, exit_code=int(code.group(1)) if code else None)
    return ToolFinished("call-1", name, arguments, result, duration, default_tools().get(name))


def plain(width: int = 80) -> tuple[ReplRenderer, io.StringIO]:
    out = io.StringIO()
    return ReplRenderer(Console(file=out, width=width), model="claude-sonnet-4-5-20250929"), out


def coloured(width: int = 80) -> tuple[ReplRenderer, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=width, height=20, force_terminal=True, color_system="standard")
    return ReplRenderer(console, model="claude-sonnet-4-5"), out


def shown(renderer: ReplRenderer, *events) -> list[str]:
    for event in events:
        renderer(event)
    return renderer.console.file.getvalue().splitlines()


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (finished("read_file", {"path": "src/app.py"}, "1\tprint()"), ["● read_file(src/app.py) ✓ 0.4s"]),
        (finished("bash", {"command": "ls"}, "a\nb\nexit code: 0", duration=1.25), ["● bash(ls) ✓ 1.2s · exit 0"]),
        (
            finished("bash", {"command": "make test"}, "compiling\n\nerror: no rule\nmake: stop\nexit code: 2"),
            ["● bash(make test) ✗ exit 2 · 0.4s", "    compiling", "    error: no rule", "    make: stop"],
        ),
        (
            finished("read_file", {"path": "nope.py"}, "nope.py does not exist.\nDid you mean:\n  nope2.py", True),
            ["● read_file(nope.py) ✗ nope.py does not exist.", "    Did you mean:", "      nope2.py"],
        ),
        (
            finished("edit_file", {"path": "a.py"}, DIFF, duration=0.01),
            [
                "● edit_file(a.py) ✓ 0.0s",
                "    --- a/a.py",
                "    +++ b/a.py",
                "    @@ -1,2 +1,2 @@",
                "    -old line",
                "    +new line",
                "     context",
            ],
        ),
        (Notice("The reply was cut off."), ["! The reply was cut off."]),
        (ReplyDiscarded("The stream was cut.", 1, 2.0), ["! The stream was cut. Retrying in 2.0s."]),
        (
            Compacted(CompactionReport("auto", 150_000, 30_000, ["summary"])),
            ["! Compacted the conversation (auto): 150,000 → 30,000 tokens; summary."],
        ),
    ],
)
def test_each_event_is_one_compact_line_with_detail_only_when_something_failed(event, expected):
    renderer, _ = plain()
    assert shown(renderer, event) == expected


def test_a_reply_then_a_tool_call_keep_their_order():
    renderer, _ = plain()
    reply = {"role": "assistant", "content": [{"type": "tool_use", "id": "call-1", "name": "bash", "input": {}}]}
    lines = shown(
        renderer,
        TextDelta("Let me check."),
        AssistantMessage(reply, "tool_use", Usage(), 1),
        ToolStarted("call-1", "bash", {"command": "ls"}, default_tools().get("bash")),
        finished("bash", {"command": "ls"}, "exit code: 0"),
    )
    assert lines == ["Let me check.", "● bash(ls) ✓ 0.4s · exit 0"]


def test_a_diff_is_coloured_and_its_length_capped():
    renderer, out = coloured()
    body = "".join(f"+added {n}\n" for n in range(40))
    diff = f"Wrote big.txt\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,40 @@\n{body}"
    renderer(finished("write_file", {"path": "big.txt"}, diff))
    text = out.getvalue()
    assert "\x1b[32m    +added 0" in text
    assert screen(text)[-2:] == ["    … 19 more lines", ""]
    renderer2, out2 = coloured()
    renderer2(finished("edit_file", {"path": "a.py"}, DIFF))
    assert "\x1b[31m    -old line" in out2.getvalue() and "\x1b[36m    @@ -1,2 +1,2 @@" in out2.getvalue()


def test_the_status_line_has_tokens_cache_share_costs_and_context_fullness():
    renderer, _ = plain()
    session = Session()
    session.record_usage(Usage(input_tokens=1_000, output_tokens=2_000, cache_read_input_tokens=9_000))
    turn = Usage(
        input_tokens=2_000, output_tokens=500, cache_creation_input_tokens=2_000, cache_read_input_tokens=7_000
    )
    session.record_usage(turn)
    renderer.turn_finished(TurnResult("done", "end_turn", 2, turn), session, 200_000, turn.context_tokens)
    # turn: 2000×3 + 500×15 + 2000×3.75 + 7000×0.3 = 23,100 µ$; the session adds 1000×3 + 2000×15 + 9000×0.3 = 35,700;
    # the context is the last reply's 11,500 tokens
    assert shown(renderer) == ["11k in · 500 out · 64% cached · $0.0231 ($0.0588 session) · ctx 6% of 200k"]


def test_an_unknown_model_shows_tokens_only_and_a_fresh_session_counts_the_overhead():
    out = io.StringIO()
    renderer = ReplRenderer(Console(file=out, width=80), model="my-local-model")
    turn = Usage(input_tokens=1_500, output_tokens=20)
    renderer.turn_finished(TurnResult("hi", "end_turn", 1, turn), Session(), 32_000, 8_000)
    assert out.getvalue() == "1.5k in · 20 out · 0% cached · ctx 25% of 32k\n"


def test_trace_lines_appear_dim_only_in_trace_mode():
    trace = TurnTrace("hello", budget=100, placements=[Placement("git_status", 1, 40, "injected")])
    renderer, out = coloured()
    renderer(ContextInjected(trace))
    assert out.getvalue() == ""
    renderer.trace = True
    renderer(ContextInjected(trace))
    lines = screen(out.getvalue())
    assert lines[0] == "trace · original message (stored and sent unchanged): 'hello'"
    assert "\x1b[2mtrace · original message" in out.getvalue()
    assert any("git_status" in line and "injected" in line for line in lines)


def test_a_narrow_terminal_cuts_lines_with_an_ellipsis():
    renderer, out = plain(width=40)
    session = Session()
    session.record_usage(Usage(12_345, 678, 0, 90_000))
    renderer(finished("bash", {"command": LONG_COMMAND}, "exit code: 0"))
    renderer(finished("read_file", {"path": "x.py"}, "Permission denied: x.py cannot be read by this user", True))
    renderer(finished("bash", {"command": "make"}, "e" * 100 + "\nexit code: 1"))
    renderer.turn_finished(TurnResult("", "end_turn", 1, Usage(12_345, 678, 0, 90_000)), session, 200_000, 103_023)
    lines = out.getvalue().splitlines()
    assert all(cell_len(line) <= 40 for line in lines)
    assert lines[0] == "● bash(pytest -x tests/… ✓ 0.4s · exit 0"
    assert lines[1] == "● read_file(x.py) ✗ Permission denied:…"
    assert lines[3] == "    " + "e" * 35 + "…"
    assert lines[-1] == "102k in · 678 out · ctx 52% of 200k"  # the cost and cache share gave way


def test_on_a_narrow_terminal_the_status_line_keeps_the_context_share_to_the_last():
    session = Session()
    session.record_usage(Usage(12_345, 678, 0, 90_000))
    result = TurnResult("", "end_turn", 1, Usage(12_345, 678, 0, 90_000))
    shown_at = {}
    for width in (100, 60, 40, 25, 16, 9, 5):
        renderer, out = plain(width=width)
        renderer.turn_finished(result, session, 200_000, session.last_usage.context_tokens)
        shown_at[width] = out.getvalue().rstrip("\n")
        assert cell_len(shown_at[width]) <= width
    assert shown_at[100].startswith("102k in · 678 out · 88% cached · $") and shown_at[100].endswith("ctx 52% of 200k")
    assert shown_at[60] == "102k in · 678 out · 88% cached · ctx 52% of 200k"
    assert shown_at[25] == "102k in · ctx 52% of 200k"
    assert shown_at[16] == "ctx 52% of 200k"
    assert shown_at[9] == "ctx 52%"
    assert shown_at[5] == "52%"


def test_no_color_leaves_no_colour_codes(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    renderer, out = coloured()
    renderer(finished("edit_file", {"path": "a.py"}, DIFF))
    renderer(finished("bash", {"command": "false"}, "exit code: 1"))
    renderer(Notice("careful"))
    assert not re.search(r"\x1b\[[0-9;]*(3[0-9]|9[0-7])[;m]", out.getvalue())
    assert "    +new line" in screen(out.getvalue())


def test_an_ascii_console_gets_ascii_glyphs_and_never_raises():
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="ascii", errors="strict", write_through=True)
    renderer = ReplRenderer(Console(file=out, width=60), model="claude-haiku-4-5")
    renderer(finished("read_file", {"path": "café.py"}, "ok"))
    renderer(finished("bash", {"command": "false"}, "naïve output\nexit code: 1"))
    renderer(finished("write_file", {"path": "é.txt"}, "could not write “é.txt”", True))
    renderer.turn_finished(TurnResult("", "end_turn", 1, Usage(10, 10)), Session(), 0, 0)
    assert raw.getvalue().decode("ascii").splitlines() == [
        "* read_file(caf?.py) + 0.4s",
        "* bash(false) x exit 1 | 0.4s",
        "    na?ve output",
        "* write_file(?.txt) x could not write ??.txt?",
        "10 in | 10 out | 0% cached | $0.0001 ($0.0000 session)",
    ]
    narrow = ReplRenderer(Console(file=out, width=30), model="claude-haiku-4-5")
    narrow.turn_finished(TurnResult("", "end_turn", 1, Usage(10, 10)), Session(), 0, 0)
    assert raw.getvalue().decode("ascii").splitlines()[-1] == "10 in | 10 out | 0% cached"  # the cost gave way


def test_the_spinner_runs_while_waiting_and_stops_before_output_and_on_ctrl_c():
    now = [100.0]
    out = io.StringIO()
    console = Console(file=out, width=60, height=20, force_terminal=True, color_system=None)
    renderer = ReplRenderer(console, model="claude-sonnet-4-5", clock=lambda: now[0])
    reply = {"role": "assistant", "content": [{"type": "tool_use", "id": "call-1", "name": "bash", "input": {}}]}
    with pytest.raises(KeyboardInterrupt), renderer.turn():
        assert renderer.spinner.running and renderer.spinner.label == "waiting for the model"
        now[0] += 3
        assert _frame(renderer) == "waiting for the model · 3s"
        renderer(TextDelta("Running it."))
        assert not renderer.spinner.running
        renderer(AssistantMessage(reply, "tool_use", Usage(), 1))
        assert not renderer.spinner.running  # a confirmation question may come before the call starts
        renderer(ToolStarted("call-1", "bash", {"command": "sleep 5"}, default_tools().get("bash")))
        assert renderer.spinner.label == "bash(sleep 5)"
        now[0] += 2
        assert _frame(renderer) == "bash(sleep 5) · 2s"
        renderer(finished("bash", {"command": "sleep 5"}, "exit code: 0", duration=2.0))
        assert renderer.spinner.label == "waiting for the model"  # the results went back to the model
        raise KeyboardInterrupt
    assert not renderer.spinner.running
    console.print("Interrupted.")
    assert [line for line in screen(out.getvalue()) if line] == [
        "Running it.",
        "● bash(sleep 5) ✓ 2.0s · exit 0",
        "Interrupted.",
    ]


def test_the_spinner_pauses_for_a_question_and_parallel_calls_share_it():
    out = io.StringIO()
    console = Console(file=out, width=60, height=20, force_terminal=True, color_system=None)
    renderer = ReplRenderer(console)
    with renderer.turn():
        with renderer.paused():
            assert not renderer.spinner.running
        assert renderer.spinner.running
        renderer(ToolStarted("a", "read_file", {"path": "a.py"}, default_tools().get("read_file")))
        renderer(ToolStarted("b", "read_file", {"path": "b.py"}, default_tools().get("read_file")))
        assert renderer.spinner.label == "read_file(a.py) +1 more"
    assert not renderer.spinner.running


def _frame(renderer: ReplRenderer) -> str:
    """The spinner's line as it would be drawn now, without its animation frame."""
    out = io.StringIO()
    Console(file=out, width=60).print(renderer.spinner)
    return out.getvalue().strip().split(" ", 1)[1]


def test_the_session_cost_prices_each_model_s_usage_at_its_own_rate_after_a_switch():
    """After /model, what the earlier model spent keeps its price: the status line must not re-price it."""
    renderer, _ = plain()
    session = Session()
    session.record_model("claude-opus-4-1")
    session.record_usage(Usage(input_tokens=1_000_000))  # $15 at Opus 4.1's rate
    session.record_model("claude-haiku-4-5")
    turn = Usage(input_tokens=1_000_000)  # $1 at Haiku 4.5's
    session.record_usage(turn)
    renderer.model = "claude-haiku-4-5"
    renderer.turn_finished(TurnResult("ok", "end_turn", 1, turn), session, 200_000, 0)
    assert "$1.00 ($16.00 session)" in shown(renderer)[0]  # was $2.00: the whole session at Haiku's rate
