"""The conversation across turns with the real agent, tools and context sources against the loopback model:
what the recent-activity block says about failed calls, errors that end a turn in the session file."""

from __future__ import annotations

import re
from xml.sax.saxutils import unescape

from support import scripted_agent
from support.fake_api import answer, tool_use

from mini_agent.agent import Agent
from mini_agent.app.build import context_keeper
from mini_agent.prompt import static_prompt


def full_agent(api, settings_for, **overrides) -> tuple[Agent, list]:
    """The agent as the command builds it: every tool, every context source, compaction per the settings."""
    settings = settings_for(api, permission_mode="bypass", **overrides)
    events: list = []
    agent = scripted_agent(settings, emit=events.append, prompt=static_prompt(), keeper=context_keeper)
    return agent, events


def block(request: dict, name: str) -> str:
    texts = [
        b["text"]
        for m in request["messages"]
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "text" and b["text"].startswith(f'<context name="{name}"')
    ]
    return texts[-1] if texts else ""


def test_the_recent_activity_block_reports_a_failed_command_with_its_exit_status_and_times(api, settings_for):
    api.script(
        answer(tool_use("bash", {"command": "echo ok"}, id="b1"), tool_use("bash", {"command": "exit 3"}, id="b2")),
        answer("The second one failed."),
        answer("I will not run it again as is."),
    )
    agent, _ = full_agent(api, settings_for)
    agent.run_turn("run both")
    agent.run_turn("what now?")
    activity = unescape(block(api.message_requests[2], "recent_activity"))  # escaped, as every block's text
    ok, failed = [line for line in activity.splitlines() if line.startswith("- ")]
    assert re.fullmatch(r'- \d\d:\d\d:\d\d bash \{"command": "echo ok".*\} -> ok \(\d+(\.\d)? s\)', ok)
    assert re.fullmatch(
        r'- \d\d:\d\d:\d\d bash \{"command": "exit 3".*\} -> failed \(exit code 3\) \(\d+(\.\d)? s\)', failed
    )
    assert "do not repeat one unchanged" in activity
