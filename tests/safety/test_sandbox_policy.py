"""Where the policy runs each shell command: the read-only sandbox, the workspace-write one, or outside.

What runs without a human's yes runs confined; a human's yes, an exact rule of the user's or bypass runs outside;
the model asking to leave the sandbox always means asking a human.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mini_agent.safety.permissions import NO_SANDBOX_ASKS, Allow, Ask, Deny, ToolCall, check, refusal_without_human
from mini_agent.safety.rules import Origin, Rules, parse_rule
from mini_agent.safety.workspace import Workspace

USER = Origin("user", "config.toml")
PROJECT = Origin("project", ".mini-agent/config.toml")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    base = Path(tmp_path_factory.mktemp("sandbox-policy")).resolve()
    (base / "project").mkdir()
    (base / "home").mkdir()
    return Workspace(root=base / "project", home=base / "home")


def bash(command: str, **extra) -> ToolCall:
    return ToolCall("bash", "exec", {"command": command, **extra})


def rules(*entries: tuple[str, str], origin: Origin = USER) -> Rules:
    return Rules(tuple(parse_rule(text, effect, origin) for effect, text in entries))


@pytest.mark.parametrize("mode", ["default", "accept-edits", "auto", "plan"])
def test_read_only_commands_run_in_the_read_only_sandbox_in_every_mode(workspace, mode):
    verdict = check(bash("git status && ls"), mode, Rules(), workspace)
    assert isinstance(verdict, Allow) and verdict.sandbox == "read-only" and not verdict.network


def test_without_a_sandbox_read_only_commands_still_run_and_auto_asks_for_the_rest(workspace):
    assert check(bash("ls"), "default", Rules(), workspace, sandboxed=False) == Allow("read-only: ls")
    verdict = check(bash("npm test"), "auto", Rules(), workspace, sandboxed=False)
    assert isinstance(verdict, Ask) and verdict.reason == NO_SANDBOX_ASKS and verdict.risk == "ordinary"


def test_auto_mode_runs_ordinary_commands_in_the_workspace_write_sandbox_without_network(workspace):
    verdict = check(bash("npm test"), "auto", Rules(), workspace)
    assert isinstance(verdict, Allow) and verdict.sandbox == "workspace-write" and not verdict.network


def test_an_exact_user_rule_runs_the_command_outside_and_a_wildcard_one_inside_with_network(workspace):
    exact = check(bash("npm install"), "default", rules(("allow", "bash(npm install)")), workspace)
    assert isinstance(exact, Allow) and exact.sandbox == "none"
    wildcard = check(bash("npm install left-pad"), "default", rules(("allow", "bash(npm install *)")), workspace)
    assert isinstance(wildcard, Allow) and wildcard.sandbox == "workspace-write" and wildcard.network


def test_a_project_rule_never_opens_the_network(workspace):
    verdict = check(bash("npm install left-pad"), "default", rules(("allow", "bash(npm *)"), origin=PROJECT), workspace)
    assert isinstance(verdict, Allow) and verdict.sandbox == "workspace-write" and not verdict.network
    exact = check(bash("npm install"), "default", rules(("allow", "bash(npm install)"), origin=PROJECT), workspace)
    assert isinstance(exact, Allow) and exact.sandbox == "workspace-write" and not exact.network


def test_bypass_runs_everything_outside(workspace):
    for command in ("ls", "npm test", "rm -rf /"):
        verdict = check(bash(command, outside_sandbox=True), "bypass", Rules(), workspace)
        assert isinstance(verdict, Allow) and verdict.sandbox == "none"


@pytest.mark.parametrize("mode", ["default", "accept-edits", "auto", "plan"])
@pytest.mark.parametrize("command", ["ls -la", "npm test"])
def test_asking_to_leave_the_sandbox_asks_a_human_in_every_mode(workspace, mode, command):
    verdict = check(bash(command, outside_sandbox=True), mode, Rules(), workspace)
    if mode == "plan" and command == "npm test":
        assert isinstance(verdict, Deny)  # plan refuses what is not read-only before any sandbox question
        return
    if mode != "auto" and command == "npm test":
        assert isinstance(verdict, Ask) and verdict.risk == "ordinary"  # a yes runs it outside anyway
        return
    assert isinstance(verdict, Ask) and verdict.risk == "sensitive" and "outside the sandbox" in verdict.reason
    refusal = refusal_without_human("bash", verdict)
    assert f"--allow 'bash({command})'" in refusal.message and "cannot ask anyone" in refusal.message


def test_an_exact_user_rule_lets_the_model_run_that_command_outside(workspace):
    verdict = check(bash("make deploy", outside_sandbox=True), "auto", rules(("allow", "bash(make deploy)")), workspace)
    assert isinstance(verdict, Allow) and verdict.sandbox == "none"


def test_an_always_answer_to_leave_the_sandbox_is_exactly_that_command(workspace):
    verdict = check(bash("pip install requests", outside_sandbox=True), "auto", Rules(), workspace)
    assert isinstance(verdict, Ask)
    (grant,) = verdict.grants
    (rule,) = grant.rules
    granted = Rules((rule,))
    assert check(bash("pip install requests", outside_sandbox=True), "auto", granted, workspace).sandbox == "none"
    other = check(bash("pip install flask", outside_sandbox=True), "auto", granted, workspace)
    assert isinstance(other, Ask)
