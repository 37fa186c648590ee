"""The three-segment system prompt and the system_hint format."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from mini_agent.prompt import RUNTIME_HEADING, TOOLS_HEADING, build_system, render_system, static_prompt, system_hint
from mini_agent.tools import default_tools

ROOT = Path(__file__).resolve().parents[1]


def test_system_hint_escapes_text_and_attributes():
    assert system_hint("truncated", "a < b & c", shown="1-5", next_offset="6") == (
        '<system_hint type="truncated" shown="1-5" next_offset="6">a &lt; b &amp; c</system_hint>'
    )
    assert system_hint("x", "t", tool='we"ird') == '<system_hint type="x" tool=\'we"ird\'>t</system_hint>'


def test_segments_one_and_two_with_the_breakpoint_after_two():
    registry = default_tools()
    blocks = build_system(static_prompt(), registry, {})
    assert len(blocks) == 2
    assert blocks[0] == {"type": "text", "text": static_prompt()}
    assert blocks[1]["cache_control"] == {"type": "ephemeral"}
    assert blocks[1]["text"].startswith(f"\n---\n\n{TOOLS_HEADING}\n\n")
    for tool in registry:
        assert f"- **{tool.name}**: {tool.guidance}" in blocks[1]["text"]


def test_segment_three_appears_only_with_hints_one_per_key_after_the_breakpoint():
    registry = default_tools()
    hints = {"tool_degraded:web_fetch": system_hint("tool_degraded", "down", tool="web_fetch"), "a_note": "note"}
    blocks = build_system(static_prompt(), registry, hints)
    assert blocks[:2] == build_system(static_prompt(), registry, {})
    assert "cache_control" not in blocks[2]
    assert blocks[2]["text"] == f"\n---\n\n{RUNTIME_HEADING}\n\nnote\n\n{hints['tool_degraded:web_fetch']}"
    assert render_system(blocks).count("\n---\n") == 2


def test_the_static_prompt_covers_the_working_principles():
    text = static_prompt()
    for needle in (
        "# Role",
        "# Working principles",
        "# Output conventions",
        "# Tool strategy",
        "language the user writes in",
        "fenced",
    ):
        assert needle in text
    assert "offset" not in text and "old_string" not in text  # strategy only, no parameter formats


def test_the_wheel_ships_the_static_prompt_inside_the_package(tmp_path):
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("mini_agent-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("mini_agent/SYSTEM_PROMPT.md").decode()
    assert shipped.strip() == (ROOT / "SYSTEM_PROMPT.md").read_text().strip()


def test_the_static_prompt_explains_the_context_blocks():
    text = static_prompt()
    section = text.split("# Context blocks", 1)[1]
    for needed in ("<context", "mini-agent adds", "did not type", "P0", "P1", "P2", "data"):
        assert needed in section
