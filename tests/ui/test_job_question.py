"""The approval question for a background job says it is one, on a line of its own."""

from __future__ import annotations

from mini_agent.gate import ApprovalRequest
from mini_agent.safety.permissions import Ask
from mini_agent.tools import default_tools
from mini_agent.ui.approval_view import BACKGROUND, approval_block

BASH = default_tools().get("bash")


def lines(arguments: dict) -> list[str]:
    request = ApprovalRequest(BASH, arguments, Ask("ordinary: not on the read-only list"), None)
    return approval_block(request, lambda colour, text: text, rows=30, columns=120).lines


def test_a_background_job_is_named_as_one_in_its_question():
    shown = lines({"command": "npm run dev", "run_in_background": True})
    assert f"  {BACKGROUND}" in shown and "  $ npm run dev" in shown
    assert not any("run_in_background" in line for line in shown)
    assert not any(BACKGROUND in line for line in lines({"command": "npm run dev"}))
