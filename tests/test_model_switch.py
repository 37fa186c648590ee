"""`/model NAME` reaches every holder of the model name: the requests, the summaries compaction writes, the
sub-agents, the context window the compaction threshold is measured against, the status line's pricing and
the session file. In process, against the scripted model server, with the REPL's own command and the agent
built by the one builder."""

from __future__ import annotations

import json

from support import repl_commands
from support.fake_api import answer, tool_use

OTHER_WINDOW = 64_000


def built(api, settings):
    """The agent as `launch` builds it for the REPL, and the REPL's commands over it."""
    return repl_commands.built(settings, warm_up=True)


def turn(repl, text: str) -> None:
    with repl.renderer.turn():
        repl.agent.run_turn(text)


def run(repl, line: str) -> str:
    command, argument, _ = repl.commands.find(line)
    command.run(argument)
    return repl.console.file.getvalue()


def summary_requests(api) -> list[dict]:
    return [body for body in api.message_requests if not body.get("tools")]


def test_after_model_every_request_summary_sub_agent_and_window_use_the_new_model(api, settings_for):
    api.pages["GET /v1/models"] = {"data": [{"id": "claude-test"}, {"id": "claude-other"}], "has_more": False}
    api.pages["GET /v1/models/claude-test"] = {"id": "claude-test", "max_input_tokens": 200_000}
    api.pages["GET /v1/models/claude-other"] = {"id": "claude-other", "max_input_tokens": OTHER_WINDOW}
    settings = settings_for(api, compact_threshold=0.5)
    agent, repl, sessions = built(api, settings)
    assert agent.window() == 200_000

    shown = run(repl, "/model claude-other")
    assert "model claude-other" in shown

    api.script(
        answer(tool_use("task", {"description": "look", "prompt": "List the files."}, id="t1")),
        answer("There are none."),  # the sub-agent
        answer("Nothing there."),
        answer("Still nothing."),
        answer("<summary>The user asked about files; there are none.</summary>"),
    )
    turn(repl, "what files are there?")
    turn(repl, "and now?")
    run(repl, "/compact")
    sessions.close()

    requests = api.message_requests
    assert [body["model"] for body in requests] == ["claude-other"] * 5
    child = requests[1]
    assert "You are a sub-agent" in json.dumps(child["system"]), "the second request is the sub-agent's"
    (summary,) = summary_requests(api)
    assert summary["model"] == "claude-other", "compaction summarises with the model in use"
    assert agent.window() == OTHER_WINDOW, "the window is the new model's, as its endpoint says"
    assert agent.keeper.threshold() == OTHER_WINDOW // 2, "and compaction is measured against it"
    assert repl.renderer.model == "claude-other", "the status line prices the turns by it"
    entries = [json.loads(line) for line in sessions.store.load(sessions.writer_id, settings.cwd).info.path.open()]
    switches = [entry["model"] for entry in entries if entry["type"] == "model"]
    assert switches == ["claude-other"], "the session file records the switch"


def test_a_compact_model_setting_keeps_summarising_with_that_model_after_a_switch(api, settings_for):
    settings = settings_for(api, compact_model="claude-summariser")
    agent, repl, sessions = built(api, settings)
    run(repl, "/model claude-other")
    api.script(answer("One."), answer("Two."), answer("<summary>Two turns.</summary>"))
    turn(repl, "first")
    turn(repl, "second")
    run(repl, "/compact")
    sessions.close()
    assert [body["model"] for body in api.message_requests] == ["claude-other", "claude-other", "claude-summariser"]


def test_cost_prices_each_models_tokens_at_that_models_prices_and_a_resumed_session_keeps_them(api, settings_for):
    from mini_agent.model.pricing import cost
    from mini_agent.usage import Usage

    settings = settings_for(api, model="claude-sonnet-4-6")
    agent, repl, sessions = built(api, settings)
    api.script(answer("On sonnet."), answer("On haiku."))
    turn(repl, "first")
    run(repl, "/model claude-haiku-4-5")
    turn(repl, "second")
    spent = agent.session.usage_by_model
    assert set(spent) == {"claude-sonnet-4-6", "claude-haiku-4-5"}
    total = cost("claude-sonnet-4-6", spent["claude-sonnet-4-6"]) + cost("claude-haiku-4-5", spent["claude-haiku-4-5"])
    assert total != cost("claude-haiku-4-5", agent.session.usage), "the two prices differ: the test can tell"
    shown = run(repl, "/cost")
    assert f"cost ${total:.4f} (claude-sonnet-4-6 $" in shown

    sessions.close()
    loaded = sessions.store.load(sessions.writer_id, settings.cwd)
    restored = loaded.restore()
    assert restored.usage_by_model == spent, "the session file says which model spent what"
    assert sum(restored.usage_by_model.values(), Usage()) == restored.usage


def test_mode_without_an_argument_lists_the_modes_and_claude_code_s_spelling_switches(api, settings_for):
    agent, repl, _ = built(api, settings_for(api))
    assert "mode default (the modes: default, accept-edits, auto, plan;" in run(repl, "/mode")
    run(repl, "/mode acceptEdits")
    assert agent.mode == "accept-edits"
