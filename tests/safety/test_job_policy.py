"""The policy for background jobs: the job tools in the rule language (no pattern; deny and ask obeyed), and a
web_fetch of loopback where a job of the session alone listens: judged like a public page, never remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_agent.errors import ConfigError
from mini_agent.safety.permissions import Allow, Ask, Deny, ToolCall, check
from mini_agent.safety.rules import Origin, Rules, parse_rule
from mini_agent.safety.workspace import Workspace

SERVED = "background job ab12's server (python -m http.server)"
URL = "http://127.0.0.1:8000/"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(root=tmp_path, home=tmp_path)


def rules(*entries: tuple[str, str]) -> Rules:
    return Rules(tuple(parse_rule(text, effect, Origin("user", "config.toml")) for effect, text in entries))


def fetch(url: str = URL) -> ToolCall:
    return ToolCall("web_fetch", "network", {"url": url})


@pytest.mark.parametrize("mode", ["default", "accept-edits", "auto", "plan"])
def test_the_job_tools_run_in_every_mode_unless_a_rule_says_otherwise(workspace, mode):
    for tool in ("job_output", "stop_job"):
        assert isinstance(check(ToolCall(tool, "read", {"job_id": "ab12"}), mode, Rules(), workspace), Allow)
        denied = check(ToolCall(tool, "read", {"job_id": "ab12"}), mode, rules(("deny", tool)), workspace)
        assert isinstance(denied, Deny) and tool in denied.message
        assert isinstance(check(ToolCall(tool, "read", {"job_id": "ab12"}), mode, rules(("ask", tool)), workspace), Ask)


def test_a_job_tools_rule_takes_no_pattern():
    with pytest.raises(ConfigError, match="takes no pattern"):
        parse_rule("stop_job(ab12)", "allow", Origin("flag"))


def test_loopback_where_a_job_alone_listens_is_judged_like_a_public_page(workspace):
    assert isinstance(check(fetch(), "auto", Rules(), workspace), Ask)  # no job: the SSRF guard asks
    assert isinstance(check(fetch(), "auto", Rules(), workspace, served=SERVED), Allow)
    asked = check(fetch(), "default", Rules(), workspace, served=SERVED)
    assert isinstance(asked, Ask) and SERVED in asked.reason and asked.grants == ()  # no "always": ports change hands
    assert isinstance(check(fetch(), "auto", rules(("deny", "web_fetch(127.0.0.1)")), workspace, served=SERVED), Deny)
    assert isinstance(check(fetch(), "auto", rules(("ask", "web_fetch(127.0.0.1)")), workspace, served=SERVED), Ask)
    metadata = check(fetch("http://169.254.169.254/"), "auto", Rules(), workspace, served=SERVED)
    assert isinstance(metadata, Ask)  # only loopback: a served flag never opens other private addresses
