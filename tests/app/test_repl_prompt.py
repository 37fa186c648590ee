"""The REPL's prompt line: the Shift+Tab question fits any terminal with its keys in sight."""

from __future__ import annotations

import pytest

from mini_agent.app.repl import auto_question


@pytest.mark.parametrize("columns", [40, 60, 80, 200])
def test_the_auto_question_wraps_to_the_terminal_with_the_keys_first(columns):
    lines = auto_question("accept-edits", columns).splitlines()
    assert all(len(line) < columns for line in lines)
    assert "y: switch" in " ".join(lines[:2]) and "stay in accept-edits" in " ".join(lines)
    assert "destructive ones and secrets leaving still ask" in " ".join(lines)
