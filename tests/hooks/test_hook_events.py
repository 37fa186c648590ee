"""The hook events beyond a tool call, a prompt and a stop: SessionStart, SessionEnd, Notification, SubagentStop,
PermissionRequest, PostToolUseFailure and PostCompact, with the fields Claude Code gives them, each at its moment.
In process: real hook commands, the loopback model, the agent as the one builder makes it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import repl_commands
from support.fake_api import answer, tool_use
from support.hooks import events_in, hook, hook_def, recording, user_config

from mini_agent.hooks import Hooks
from mini_agent.safety.permissions import Allow, Deny
from mini_agent.safety.rules import Origin, Rules, parse_rules

COMMON = {"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name"}
ALLOW = """echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'"""


def texts(request: dict) -> str:
    """Every text the request's messages carry (tool results' included), one after another."""
    found = []
    for message in request["messages"]:
        for block in message["content"]:
            content = block.get("content") if block.get("type") == "tool_result" else block.get("text")
            found.append(content if isinstance(content, str) else json.dumps(content))
    return "\n".join(found)


# ---- SessionStart and SessionEnd --------------------------------------------------------------------------------


def test_session_start_context_reaches_the_first_request_escaped_and_session_end_runs_last(run_cli, api, tmp_path):
    log = tmp_path / "events"
    config = hook("SessionStart", recording(log, "echo 'deploys are frozen <until> friday'"), matcher="startup")
    config += hook("SessionStart", recording(log, "echo wrong-source"), matcher="resume|clear|compact")
    config += hook("SessionEnd", recording(log))
    user_config(tmp_path, config)
    api.script(answer("ok"))
    done = run_cli(["-p", "ship it", "--output-format", "json"], api)
    assert done.returncode == 0, done.stderr.decode()
    sent = texts(api.message_requests[0])
    assert '<system_hint type="hook" event="SessionStart">deploys are frozen &lt;until&gt; friday</system_hint>' in sent
    assert "wrong-source" not in sent
    record = json.loads(done.stdout)
    start, end = events_in(log)
    assert COMMON <= set(start) and COMMON <= set(end)
    assert (start["hook_event_name"], start["source"]) == ("SessionStart", "startup")
    assert start["model"] == api.message_requests[0]["model"]
    assert (end["hook_event_name"], end["reason"]) == ("SessionEnd", "other")
    assert start["session_id"] == end["session_id"] == record["session_id"]
    assert Path(end["transcript_path"]).is_file()

    api.script(answer("again"))
    resumed = run_cli(["-p", "more", "--continue"], api)
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert [event["source"] for event in events_in(log)[2:] if event["hook_event_name"] == "SessionStart"] == [
        "resume"
    ]
    assert "wrong-source" in texts(api.message_requests[1])  # the matcher that names resume


def test_the_repl_starts_and_ends_sessions_at_clear_and_at_ctrl_d(run_cli, api, tmp_path):
    log = tmp_path / "events"
    user_config(tmp_path, hook("SessionStart", recording(log)) + hook("SessionEnd", recording(log)))
    api.script(answer("hi"), answer("hi again"))
    done = run_cli([], api, typed=["hello", "/clear", "hello again"])
    assert done.returncode == 0, done.stderr.decode()
    seen = [(event["hook_event_name"], event.get("source") or event.get("reason")) for event in events_in(log)]
    assert seen == [
        ("SessionStart", "startup"),
        ("SessionEnd", "clear"),
        ("SessionStart", "clear"),
        ("SessionEnd", "prompt_input_exit"),
    ]
    first, _, after_clear, last = events_in(log)
    assert first["session_id"] != after_clear["session_id"] == last["session_id"]


def test_session_end_hooks_cannot_hold_the_exit_beyond_their_budget(run_cli, api, tmp_path, monkeypatch):
    from mini_agent.hooks import dispatch

    monkeypatch.setattr(dispatch, "SESSION_END_BUDGET", 0.3)
    user_config(tmp_path, hook("SessionEnd", "sleep 30.2525") + hook("SessionEnd", "touch never-ran"))
    api.script(answer("ok"))
    done = run_cli(["-p", "hello"], api)
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().strip() == "ok"
    assert "hook SessionEnd: sleep 30.2525 timed out after" in done.stderr.decode()
    assert not (tmp_path / "never-ran").exists()  # the budget was spent


def test_a_project_session_hook_runs_only_once_trusted(run_cli, api, tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".mini-agent").mkdir()
    marker = tmp_path / "ran"
    config = hook("SessionStart", f"touch {marker}") + hook("SessionEnd", f"touch {marker}")
    (project / ".mini-agent" / "config.toml").write_text(config)
    api.script(answer("ok"), answer("ok"))
    untrusted = run_cli(["-p", "hello"], api, cwd=project)
    assert untrusted.returncode == 0, untrusted.stderr.decode()
    assert "the project's hooks" in untrusted.stderr.decode() and not marker.exists()
    trusted = run_cli(["-p", "hello", "--trust-project-hooks"], api, cwd=project)
    assert trusted.returncode == 0, trusted.stderr.decode()
    assert marker.exists()


# ---- PostToolUse and PostToolUseFailure ----------------------------------------------------------------------


def test_a_failed_call_goes_to_post_tool_use_failure_and_a_good_one_to_post_tool_use(run_cli, api, tmp_path):
    good, bad = tmp_path / "good", tmp_path / "bad"
    config = hook("PostToolUse", recording(good), matcher="Bash")
    config += hook("PostToolUseFailure", recording(bad, "echo 'look at the log first' >&2; exit 2"), matcher="Bash")
    user_config(tmp_path, config)
    api.script(
        answer(tool_use("bash", {"command": "echo fine"}, id="b1")),
        answer(tool_use("bash", {"command": "echo broken >&2; exit 3"}, id="b2")),
        answer(tool_use("read_file", {"path": "missing.txt"}, id="r1")),
        answer("done"),
    )
    done = run_cli(["-p", "go", "--yes"], api)
    assert done.returncode == 0, done.stderr.decode()
    (succeeded,) = events_in(good)
    assert succeeded["tool_use_id"] == "b1" and succeeded["tool_response"]["exit_code"] == 0
    (failed,) = events_in(bad)  # read_file's failure is not a Bash one: the matcher left it out
    assert COMMON <= set(failed) and failed["hook_event_name"] == "PostToolUseFailure"
    assert failed["tool_use_id"] == "b2" and failed["tool_name"] == "bash" and failed["exit_code"] == 3
    assert "broken" in failed["error"] and failed["is_interrupt"] is False and "tool_response" not in failed
    result = api.message_requests[2]["messages"][-1]["content"][0]["content"]
    assert result.endswith(
        '<system_hint type="hook" event="PostToolUseFailure">A PostToolUseFailure hook objected: look at the log '
        "first</system_hint>"
    )


# ---- SubagentStop ------------------------------------------------------------------------------------------


def test_subagent_stop_runs_when_a_sub_agent_finishes_and_can_send_it_back_to_work(run_cli, api, tmp_path):
    log, stops = tmp_path / "subagent", tmp_path / "stops"
    script = recording(log, "tail -n1 " + str(log) + " | grep -q '\"stop_hook_active\": true' && exit 0; "
                       "echo 'check your answer' >&2; exit 2")  # fmt: skip
    user_config(tmp_path, hook("SubagentStop", script, matcher="task") + hook("Stop", recording(stops)))
    api.script(
        answer(tool_use("task", {"description": "look", "prompt": "List the files."}, id="t1")),
        answer("none"),  # the sub-agent
        answer("none, checked"),  # the sub-agent, sent back once
        answer("done"),
    )
    done = run_cli(["-p", "delegate", "--yes"], api)
    assert done.returncode == 0, done.stderr.decode()
    first, second = events_in(log)
    assert COMMON <= set(first) and first["hook_event_name"] == "SubagentStop"
    assert (first["agent_id"], first["agent_type"]) == ("1", "task")
    assert [first["stop_hook_active"], second["stop_hook_active"]] == [False, True]
    assert (first["last_assistant_message"], second["last_assistant_message"]) == ("none", "none, checked")
    assert "A SubagentStop hook says the task is not done: check your answer" in texts(api.message_requests[2])
    (stop,) = events_in(stops)  # the parent's stop only
    assert "agent_id" not in stop and stop["last_assistant_message"] == "done"


# ---- PermissionRequest and Notification ----------------------------------------------------------------------


def built_with(api, settings_for, tmp_path, hooks, asked: list, answer_with=None, **overrides):
    """The agent the one builder makes, with `hooks`; each question the human gets is appended to `asked`."""

    def confirm(request):
        asked.append(request)
        return answer_with or Deny("Not run: the user said no.")

    settings = settings_for(api, **overrides)
    agent, _, sessions = repl_commands.built(settings, hooks=Hooks(hooks, settings.cwd), confirm=confirm)
    return agent, sessions


@pytest.mark.parametrize(
    "refusal",
    [
        "echo 'not on Fridays' >&2; exit 2",
        """echo '{"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "not on Fridays"}}}'""",
    ],
    ids=["exit-2", "json"],
)
def test_a_permission_request_hook_answers_a_question_instead_of_the_human(api, settings_for, tmp_path, refusal):
    log, notes = tmp_path / "asked", tmp_path / "notes"
    hooks = [
        hook_def("PermissionRequest", recording(log, ALLOW), matcher="Write"),
        hook_def("PermissionRequest", recording(log, refusal), matcher="Bash"),
        hook_def("Notification", recording(notes)),
    ]
    asked: list = []
    agent, sessions = built_with(api, settings_for, tmp_path, hooks, asked)
    api.script(
        answer(tool_use("write_file", {"path": "new.txt", "content": "x"}, id="w1")),
        answer(tool_use("bash", {"command": "touch made-by-bash"}, id="b1")),
        answer("done"),
    )
    agent.run_turn("write it")
    sessions.close()
    assert (tmp_path / "new.txt").read_text() == "x" and not (tmp_path / "made-by-bash").exists()
    assert asked == [] and events_in(notes) == []  # the hooks answered: nobody waited for the human
    written, ran = events_in(log)
    assert COMMON <= set(written) and written["hook_event_name"] == "PermissionRequest"
    assert written["tool_name"] == "write_file" and written["tool_input"]["file_path"] == str(tmp_path / "new.txt")
    assert written["permission_suggestions"][0]["type"] == "addRules" and "creates" in written["reason"]
    assert ran["tool_input"]["command"] == "touch made-by-bash"
    result = api.message_requests[2]["messages"][-1]["content"][0]
    assert result["is_error"] and result["content"] == "Not run: a PermissionRequest hook refused it: not on Fridays"


def test_a_permission_request_hook_cannot_open_what_a_deny_rule_refuses_or_a_sensitive_question(
    api, settings_for, tmp_path
):
    project, log, notes = tmp_path / "project", tmp_path / "asked", tmp_path / "notes"
    project.mkdir()
    hooks = [hook_def("PermissionRequest", recording(log, ALLOW)), hook_def("Notification", recording(notes))]
    rules = Rules(parse_rules("write_file(secret-plan.txt)", "deny", Origin("user", "test")))
    asked: list = []
    agent, sessions = built_with(api, settings_for, tmp_path, hooks, asked, cwd=project, rules=rules)
    config = project / ".mini-agent" / "config.toml"  # protected: what runs next session
    api.script(
        answer(tool_use("write_file", {"path": "secret-plan.txt", "content": "x"}, id="w1")),
        answer(tool_use("write_file", {"path": ".mini-agent/config.toml", "content": "x"}, id="w2")),
        answer("done"),
    )
    agent.run_turn("write them")
    sessions.close()
    assert not (project / "secret-plan.txt").exists() and not config.exists()
    (ran,) = events_in(log)  # never for the denied call: a deny rule asks nobody
    assert ran["tool_input"]["file_path"] == str(config) and ran["risk"] == "sensitive"
    assert [request.tool.name for request in asked] == ["write_file"]  # the human still decides that one
    (note,) = events_in(notes)
    assert COMMON <= set(note) and note["notification_type"] == "permission_prompt"
    assert "write_file" in note["message"]
    first = api.message_requests[1]["messages"][-1]["content"][0]["content"]
    assert "denied by the rule" in first


def test_without_a_human_to_ask_permission_request_hooks_do_not_run(run_cli, api, tmp_path):
    log = tmp_path / "asked"
    user_config(tmp_path, hook("PermissionRequest", recording(log, ALLOW)))
    api.script(answer(tool_use("write_file", {"path": "new.txt", "content": "x"}, id="w1")), answer("could not"))
    done = run_cli(["-p", "write it"], api)
    assert done.returncode == 4, done.stderr.decode()  # refused for want of a human, as Claude Code's -p does
    assert not (tmp_path / "new.txt").exists() and events_in(log) == []


def test_a_human_yes_still_runs_when_the_hooks_have_no_opinion(api, settings_for, tmp_path):
    log = tmp_path / "asked"
    asked: list = []
    agent, sessions = built_with(
        api, settings_for, tmp_path, [hook_def("PermissionRequest", recording(log))], asked, Allow("yes")
    )
    api.script(answer(tool_use("write_file", {"path": "new.txt", "content": "x"}, id="w1")), answer("done"))
    agent.run_turn("write it")
    sessions.close()
    assert len(events_in(log)) == 1 and len(asked) == 1
    assert (tmp_path / "new.txt").read_text() == "x"


# ---- PostCompact, and SessionStart after a compaction --------------------------------------------------------


def test_post_compact_gets_the_summary_and_session_start_context_follows_it(api, settings_for, tmp_path):
    post, start = tmp_path / "post", tmp_path / "start"
    hooks = [
        hook_def("PostCompact", recording(post)),
        hook_def("SessionStart", recording(start, "echo 'reread <PLAN.md>'"), matcher="compact"),
    ]
    asked: list = []
    agent, sessions = built_with(api, settings_for, tmp_path, hooks, asked)
    api.script(answer("One."), answer("Two."), answer("<summary>Two turns went by.</summary>"), answer("Three."))
    agent.run_turn("first")
    agent.run_turn("second")
    report = agent.keeper.compact_now(agent.session, agent.emit)
    agent.run_turn("third")
    sessions.close()
    (compacted,) = events_in(post)
    assert COMMON <= set(compacted) and compacted["trigger"] == "manual"
    assert "Two turns went by." in compacted["compact_summary"]
    assert compacted["tokens_before"] == report.before and 0 < compacted["tokens_after"] <= report.after
    (started,) = events_in(start)
    assert started["source"] == "compact"
    head = api.message_requests[-1]["messages"][0]["content"]
    assert head[-1]["text"] == '<system_hint type="hook" event="SessionStart">reread &lt;PLAN.md&gt;</system_hint>'


# ---- Claude Code's .claude/settings.json -----------------------------------------------------------------------


def test_a_projects_claude_code_hooks_run_once_trusted_and_what_has_no_counterpart_is_said(run_cli, api, tmp_path):
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".claude").mkdir()
    log = tmp_path / "ported"
    settings = {
        "hooks": {
            "PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": recording(log), "timeout": 9}]}
            ],
            "SubagentStart": [{"hooks": [{"type": "command", "command": "true"}]}],
            "Stop": [{"hooks": [{"type": "prompt", "prompt": "Is the task done?"}]}],
        }
    }
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"command": recording(log)}]}]}})
    )
    api.script(answer(tool_use("bash", {"command": "true"}, id="b1")), answer("done"))
    untrusted = run_cli(["-p", "go", "--yes"], api, cwd=project)
    assert untrusted.returncode == 0, untrusted.stderr.decode()
    stderr = untrusted.stderr.decode()
    assert "the project's hooks" in stderr and "--trust-project-hooks" in stderr and not log.exists()
    assert "The SubagentStart hooks in" in stderr and "mini-agent has no SubagentStart event" in stderr
    assert "is not a command (type 'prompt')" in stderr

    api.script(answer(tool_use("bash", {"command": "true"}, id="b2")), answer("done"))
    trusted = run_cli(["-p", "go", "--yes", "--trust-project-hooks"], api, cwd=project)
    assert trusted.returncode == 0, trusted.stderr.decode()
    started, ran = events_in(log)
    assert started["hook_event_name"] == "SessionStart"
    assert ran["hook_event_name"] == "PostToolUse" and ran["tool_use_id"] == "b2"
