"""Thinking across a session: through compaction and resume, in the REPL (folded, Ctrl-O shows it), in
stream-json, and in the cost. In process, with the REPL's own commands and the agent the one builder makes, and
the command itself through `run_cli`, against the loopback model."""

from __future__ import annotations

import json

from support import repl_commands
from support.fake_api import answer, thinking, tool_use

from mini_agent.ui.repl_input import ModeSwitch, key_bindings


def claude(api) -> list[str]:
    """Anthropic's endpoint family (what it takes back, what thinking it takes), at the loopback model."""
    return ["--provider", "anthropic", "--base-url", api.url, "--model", "claude-sonnet-4-5"]


def built(api, settings):
    """The agent as `launch` builds it for the REPL, and the REPL's commands over it."""
    return repl_commands.built(settings, warm_up=False)


def run(repl, line: str) -> str:
    command, argument, _ = repl.commands.find(line)
    start = len(repl.console.file.getvalue())
    command.run(argument)
    return repl.console.file.getvalue()[start:]


def turn(repl, text: str) -> None:
    with repl.renderer.turn():
        repl.agent.run_turn(text)


def test_effort_command_shows_the_level_and_choices_and_sets_it_for_the_next_turn(api, settings_for):
    settings = settings_for(api, provider="anthropic", model="claude-sonnet-4-5")
    agent, repl, sessions = built(api, settings)
    shown = run(repl, "/effort")
    assert "effort off" in shown and "off | low | medium | high | max" in shown
    assert "budget of 8,000" in run(repl, "/effort medium")
    assert "Unknown effort" in run(repl, "/effort extreme") and agent.settings.effort == "medium"
    api.script(answer("Hi."))
    turn(repl, "hello")
    sessions.close()
    assert api.message_requests[0]["thinking"] == {"type": "enabled", "budget_tokens": 8_000}


def test_the_repl_folds_thinking_into_one_dim_line_and_ctrl_o_prints_it_through_the_sanitiser(api, settings_for):
    from mini_agent.model.pricing import cost
    from mini_agent.usage import Usage

    reasoning = "Step one: read k.\x1b[2KStep two: answer."
    usage = {"input_tokens": 1000, "output_tokens": 4000}  # mostly thinking: the output usage includes it
    api.script(answer(thinking(reasoning, "sig-1"), "The answer.", usage=usage))
    settings = settings_for(api, provider="anthropic", model="claude-sonnet-4-5", effort="high")
    agent, repl, sessions = built(api, settings)
    turn(repl, "k?")
    sessions.close()
    screen = repl.console.file.getvalue()
    assert "✻ Thought for " in screen and "tokens (Ctrl-O to show)" in screen
    assert "Step one" not in screen, "folded: the reasoning itself is not shown"
    assert screen.index("✻ Thought") < screen.index("The answer.")
    bindings = key_bindings(ModeSwitch(lambda: "default", lambda mode: None), repl.renderer.show_thinking)
    assert any(binding.keys == ("c-o",) for binding in bindings.bindings)
    repl.renderer.show_thinking()
    shown = repl.console.file.getvalue()[len(screen) :]
    assert "Step one: read k.⟨ESC⟩[2KStep two: answer." in shown and "\x1b[2K" not in shown
    assert f"${cost('claude-sonnet-4-5', Usage(1000, 4000)):.4f}" in run(repl, "/cost")


def test_compaction_in_a_tool_loop_keeps_the_loops_thinking_and_drops_the_summarised_turns(api, settings_for, tmp_path):
    lines = (f"line {n}: lorem ipsum dolor sit amet, consectetur\n" for n in range(1900))
    (tmp_path / "big.txt").write_text("".join(lines))
    api.route(lambda body: not body.get("tools"), answer("<summary>Turn one looked up k.</summary>"))
    loop = thinking("Read the big file.", "sig-3")
    api.script(
        answer(thinking("Turn one.", "sig-1"), tool_use("read_file", {"path": "big.txt", "limit": 3}), measured=True),
        answer(thinking("Done with one.", "sig-2"), "One done.", measured=True),
        answer(loop, tool_use("read_file", {"path": "big.txt"}), measured=True),
        answer(thinking("Done.", "sig-4"), "Two done.", measured=True),
    )
    settings = settings_for(
        api, provider="anthropic", model="claude-sonnet-4-5", effort="low", context_window=30_000, compact_threshold=0.5
    )
    agent, repl, sessions = built(api, settings)
    turn(repl, "one")
    turn(repl, "two")
    sessions.close()
    last = api.message_requests[-1]
    assert agent.session.compactions == 1, "the big result compacted the conversation inside the tool loop"
    sent = json.dumps(last["messages"])
    assert "sig-1" not in sent and "sig-2" not in sent, "summarised turns leave no thinking behind"
    loop_reply = next(m for m in last["messages"] if m["role"] == "assistant")
    assert loop_reply["content"][0] == loop, "the loop's reply keeps its thinking, signature and all"
    assert last["thinking"]["type"] == "enabled"


def test_a_resumed_session_sends_the_thinking_blocks_back_byte_for_byte(run_cli, api):
    first = [thinking("Plan: look up k.", "sig-R1"), {"type": "redacted_thinking", "data": "Qk=="}]
    api.script(
        answer(*first, tool_use("read_file", {"path": "nothing.txt"}, id="t1")),
        answer(thinking("It is missing.", "sig-R2"), "No such file."),
        answer("Still none."),
    )
    done = run_cli(["-p", "read nothing.txt", "--effort", "medium", *claude(api)], api)
    assert done.returncode == 0, done.stderr
    again = run_cli(["-p", "and now?", "--continue", "--effort", "medium", *claude(api)], api)
    assert again.returncode == 0, again.stderr
    before, resumed = api.message_requests[1]["messages"], api.message_requests[2]["messages"]
    unmarked = json.dumps(before).replace(', "cache_control": {"type": "ephemeral"}', "")  # the moving breakpoint
    assert json.dumps(resumed[: len(before)]) == unmarked
    assert resumed[1]["content"][:2] == first


def test_stream_json_gives_thinking_records_and_the_usage_counts_thinking_output_tokens(run_cli, api):
    usage = {"input_tokens": 1000, "output_tokens": 4000}  # most of it thinking: output usage includes it
    redacted = {"type": "redacted_thinking", "data": "Zm9v"}
    api.script(answer(thinking("Weigh it.", "sig-S"), redacted, "Yes.", usage=usage))
    done = run_cli(["-p", "should I?", "--output-format", "stream-json", "--effort", "high", *claude(api)], api)
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.decode().splitlines()]
    kinds = [record["type"] for record in records]
    assert kinds.index("thinking") < kinds.index("assistant")
    thoughts = [record for record in records if record["type"] == "thinking"]
    assert [(r["thinking"], r["redacted"], r["step"]) for r in thoughts] == [("Weigh it.", False, 1), ("", True, 1)]
    assert records[-1]["usage"]["output_tokens"] == 4000


def test_text_mode_does_not_show_the_thinking(run_cli, api):
    api.script(answer(thinking("Secret reasoning.", "sig-T"), "Plain answer."))
    done = run_cli(["-p", "q", "--effort", "low", *claude(api)], api)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == "Plain answer."
    assert "Secret reasoning" not in done.stderr.decode()
