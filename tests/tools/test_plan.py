"""exit_plan_mode: plan mode ends with a plan the human approves (the mode switches and the work starts in the same
turn), sends back with what to change, or, where nobody can be asked (-p), the run ends with the plan."""

from __future__ import annotations

import io
import json
import os

import pytest
from support import ScriptedKeys
from support.fake_api import answer, tool_use

from mini_agent.app.build import AgentBuilder
from mini_agent.model import AnthropicProvider
from mini_agent.safety.rules import Origin, Rules, parse_rules
from mini_agent.ui.confirm import ask_on_terminal

PLAN = "# Plan\n\n1. Write `a.txt` with a greeting.\n2. Check it."


def build(settings, typed: str):
    """The agent as the REPL makes it, its questions answered with these key presses on the terminal's path;
    what the questions printed is in the returned stream."""
    err = io.StringIO()
    confirm = ask_on_terminal(err, ScriptedKeys(typed), lambda: os.terminal_size((80, 24)))
    agent = AgentBuilder(settings, AnthropicProvider(settings, sleep=lambda seconds: None))(lambda e: None, confirm)
    return agent, err


def results(request: dict) -> list[dict]:
    return [block for block in request["messages"][-1]["content"] if block.get("type") == "tool_result"]


def system_text(request: dict) -> str:
    return "\n".join(block["text"] for block in request["system"])


def test_an_approved_plan_switches_to_accept_edits_and_the_work_starts_in_the_same_turn(api, settings_for):
    api.script(
        answer(tool_use("exit_plan_mode", {"plan": PLAN})),
        answer(tool_use("write_file", {"path": "a.txt", "content": "hello\n"})),
        answer("Done."),
    )
    settings = settings_for(api, permission_mode="plan")
    agent, err = build(settings, "a")  # one key: a second question (the write) would find no yes
    result = agent.run_turn("add a greeting file")

    assert result.text == "Done." and agent.mode == "accept-edits"
    assert (settings.cwd / "a.txt").read_text() == "hello\n"
    approved = results(api.message_requests[1])[0]
    assert not approved.get("is_error") and "approved the plan" in approved["content"]
    assert "accept-edits mode" in approved["content"]
    shown = err.getvalue()
    assert "1. Write a.txt with a greeting." in shown and "Carry out this plan?" in shown  # rendered Markdown
    assert "needs your approval" not in shown  # the write was never asked about
    first, later = (system_text(request) for request in (api.message_requests[0], api.message_requests[1]))
    assert "Plan mode is on" in first and "exit_plan_mode" in first
    assert "Plan mode is on" not in later


def test_approving_with_y_switches_to_default_mode_where_edits_still_ask(api, settings_for):
    api.script(
        answer(tool_use("exit_plan_mode", {"plan": PLAN})),
        answer(tool_use("write_file", {"path": "a.txt", "content": "hello\n"})),
        answer("Asked."),
    )
    settings = settings_for(api, permission_mode="plan")
    agent, err = build(settings, "y")
    agent.run_turn("add a greeting file")

    assert agent.mode == "default"
    assert "default mode" in results(api.message_requests[1])[0]["content"]
    assert "write_file(a.txt) needs your approval" in err.getvalue()  # and the key presses ran out: no
    assert not (settings.cwd / "a.txt").exists()


def test_keep_planning_sends_the_humans_words_back_as_the_result_and_plan_mode_stays(api, settings_for):
    api.script(answer(tool_use("exit_plan_mode", {"plan": PLAN})), answer("I will revise it."))
    settings = settings_for(api, permission_mode="plan")
    agent, _ = build(settings, "nsplit step 1 in two\n")
    agent.run_turn("add a greeting file")

    assert agent.mode == "plan"
    sent = results(api.message_requests[1])[0]
    assert sent["is_error"] and "split step 1 in two" in sent["content"]
    assert "plan mode goes on" in sent["content"] and "Plan mode is on" in system_text(api.message_requests[1])


def test_ctrl_c_at_the_plan_keeps_planning_and_ends_the_turn(api, settings_for):
    from mini_agent.errors import TurnAborted

    class Interrupted(ScriptedKeys):
        def key(self) -> str:
            raise KeyboardInterrupt

    api.script(answer(tool_use("exit_plan_mode", {"plan": PLAN})))
    settings = settings_for(api, permission_mode="plan")
    confirm = ask_on_terminal(io.StringIO(), Interrupted(""), lambda: os.terminal_size((80, 24)))
    agent = AgentBuilder(settings, AnthropicProvider(settings))(lambda e: None, confirm)
    with pytest.raises(TurnAborted):
        agent.run_turn("plan it")
    assert agent.mode == "plan"
    (result,) = [block for block in agent.session.messages[-1]["content"] if block.get("type") == "tool_result"]
    assert result["is_error"] and "did not approve the plan and stopped the turn (Ctrl-C)" in result["content"]


def test_outside_plan_mode_the_call_is_refused_with_a_clear_result_and_nobody_is_asked(api, settings_for):
    api.script(answer(tool_use("exit_plan_mode", {"plan": PLAN})), answer("Carrying on."))
    agent, err = build(settings_for(api, permission_mode="accept-edits"), "a")
    agent.run_turn("do it")

    sent = results(api.message_requests[1])[0]
    assert sent["is_error"] and "session is in accept-edits mode, not planning" in sent["content"]
    assert err.getvalue() == "" and agent.mode == "accept-edits"


def test_a_deny_rule_in_claude_codes_spelling_keeps_the_model_planning(api, settings_for):
    api.script(answer(tool_use("exit_plan_mode", {"plan": PLAN})), answer("Here is the plan instead."))
    rules = Rules(parse_rules("ExitPlanMode", "deny", Origin("flag", "--deny")))
    agent, err = build(settings_for(api, permission_mode="plan", rules=rules), "a")
    agent.run_turn("plan it")

    sent = results(api.message_requests[1])[0]
    assert sent["is_error"] and "denied by the rule deny exit_plan_mode" in sent["content"]
    assert err.getvalue() == "" and agent.mode == "plan"


def test_an_allow_rule_approves_no_plan_in_the_humans_place(api, settings_for):
    api.script(answer(tool_use("exit_plan_mode", {"plan": PLAN})), answer("Waiting."))
    rules = Rules(parse_rules("ExitPlanMode", "allow", Origin("flag", "--allow")))
    agent, err = build(settings_for(api, permission_mode="plan", rules=rules), "n\n")
    agent.run_turn("plan it")
    assert "Carry out this plan?" in err.getvalue() and agent.mode == "plan"


def test_a_one_shot_plan_run_ends_with_the_plan_as_its_result_and_nothing_runs(api, run_cli, tmp_path):
    api.script(answer("Looking first.", tool_use("exit_plan_mode", {"plan": PLAN})))
    done = run_cli(["-p", "add a greeting", "--permission-mode", "plan", "--output-format", "json"], api)

    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["result"] == PLAN and record["stop_reason"] == "plan" and record["subtype"] == "success"
    assert record["permission_denials"] == [] and len(api.message_requests) == 1
    assert not (tmp_path / "a.txt").exists()


def test_a_one_shot_plan_run_prints_the_plan_in_text_and_ends_stream_json_with_it(api, run_cli):
    api.script(answer(tool_use("exit_plan_mode", {"plan": PLAN})), answer(tool_use("exit_plan_mode", {"plan": PLAN})))
    text = run_cli(["-p", "plan it", "--permission-mode", "plan"], api)
    assert text.returncode == 0 and text.stdout.decode() == PLAN + "\n"

    stream = run_cli(["-p", "plan it", "--permission-mode", "plan", "--output-format", "stream-json"], api)
    records = [json.loads(line) for line in stream.stdout.decode().splitlines()]
    assert stream.returncode == 0 and records[-1]["type"] == "result" and records[-1]["result"] == PLAN
    call = next(record for record in records if record["type"] == "tool_call")
    assert call["name"] == "exit_plan_mode" and call["input"] == {"plan": PLAN}


def test_escape_sequences_in_a_plan_are_shown_by_name_never_sent(api, settings_for):
    hostile = "# Plan\n\nStep one\x1b[2K\r\x1b]52;c;ZWNobyBwd25lZA==\x07 done\u202e"
    api.script(answer(tool_use("exit_plan_mode", {"plan": hostile})), answer("ok"))
    agent, err = build(settings_for(api, permission_mode="plan"), "n\n")
    agent.run_turn("plan it")

    shown = err.getvalue()
    assert "\x1b" not in shown and "\x07" not in shown and "\r" not in shown and "\u202e" not in shown
    assert "⟨ESC⟩" in shown and "⟨RLO⟩" in shown and "this plan contains terminal control characters" in shown


def test_a_sub_agent_is_offered_no_plan_to_present(api, settings_for):
    api.script(
        answer(tool_use("task", {"description": "look", "prompt": "look around"})),
        answer("Nothing there."),
        answer("Done."),
    )
    agent, _ = build(settings_for(api, permission_mode="plan"), "")
    agent.run_turn("plan it")
    parent, child = api.message_requests[0], api.message_requests[1]
    assert "exit_plan_mode" in [tool["name"] for tool in parent["tools"]]
    assert "exit_plan_mode" not in [tool["name"] for tool in child["tools"]]
    assert "Plan mode is on" not in system_text(child)


def test_the_human_edits_the_plan_in_their_editor_and_the_model_carries_out_their_version(
    api, settings_for, tmp_path, monkeypatch
):
    """`e` opens $EDITOR (a real program here: sed rewriting the file) on the plan; the edited plan is shown, and
    approved, it reaches the model escaped in the result as the plan to carry out."""
    monkeypatch.setenv("EDITOR", "sed -i s/a.greeting/a.<farewell>/")
    monkeypatch.delenv("VISUAL", raising=False)
    api.script(answer(tool_use("exit_plan_mode", {"plan": PLAN})), answer("Doing your version."))
    settings = settings_for(api, permission_mode="plan")
    agent, err = build(settings, "ea")
    agent.run_turn("add a greeting file")

    approved = results(api.message_requests[1])[0]["content"]
    assert "edited the plan and approved their version" in approved
    assert "Write `a.txt` with a.&lt;farewell&gt;." in approved and "accept-edits mode" in approved
    assert "Your version of the plan" in err.getvalue() and agent.mode == "accept-edits"


def test_without_an_editor_the_plan_is_asked_about_as_it_was(api, settings_for, monkeypatch):
    monkeypatch.setenv("EDITOR", "false")  # an editor that fails: nothing is taken from it
    monkeypatch.delenv("VISUAL", raising=False)
    api.script(answer(tool_use("exit_plan_mode", {"plan": PLAN})), answer("ok"))
    agent, err = build(settings_for(api, permission_mode="plan"), "ey")
    agent.run_turn("plan it")
    approved = results(api.message_requests[1])[0]["content"]
    assert approved.startswith("The user approved the plan.") and "No editor could be run" in err.getvalue()
