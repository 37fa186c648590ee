"""The command (cli/main.py) run in process against the loopback model: flags, output formats, exit codes,
refusals, piped input, failures. tests/e2e/test_cli.py runs the installed command for what only a process shows."""

from __future__ import annotations

import json
import re

import pytest
from support import TEST_KEY
from support.fake_api import answer, failure, tool_use


def test_without_a_key_it_says_how_to_set_one(run_cli):
    done = run_cli(["-p", "hello"])
    assert done.returncode == 2
    assert "ANTHROPIC_API_KEY" in done.stderr.decode() and "Traceback" not in done.stderr.decode()


def test_bad_flags_are_usage_errors(run_cli, api):
    done = run_cli(["-p", "x", "--output-format", "yaml"], api)
    assert done.returncode == 2 and "output format" in done.stderr.decode()
    done = run_cli(["-p", "x", "--permission-mode", "reckless"], api)
    assert done.returncode == 2 and "permission mode" in done.stderr.decode()


def test_claude_code_s_permission_mode_spellings_are_accepted(run_cli, api, tmp_path):
    api.script(answer(tool_use("write_file", {"path": "a.txt", "content": "x\n"})), answer("Written."))
    done = run_cli(["-p", "write it", "--permission-mode", "acceptEdits"], api)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "a.txt").read_text() == "x\n"
    api.script(answer("Fine."))
    done = run_cli(["-p", "x", "--permission-mode", "bypassPermissions"], api)
    assert done.returncode == 0 and "every tool call runs without asking" in done.stderr.decode()


def test_text_progress_is_one_line_per_tool_call_with_the_exit_status_of_commands(run_cli, api, tmp_path):
    calls = [
        tool_use("bash", {"command": "echo hi"}, id="ok"),
        tool_use("bash", {"command": "ls nothing-here"}, id="fails"),
        tool_use("read_file", {"path": "missing.txt"}, id="missing"),
    ]
    api.script(answer(*calls[:1]), answer(*calls[1:2]), answer(*calls[2:]), answer("Done."))
    done = run_cli(["-p", "look around"], api)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.decode().splitlines()
    tool_lines = [line for line in lines if line.startswith("● ")]
    assert len(tool_lines) == 3 and not any(line.startswith("  ✓") for line in lines)
    assert re.fullmatch(r"● bash\(echo hi\) ✓ \d+\.\ds · exit 0", tool_lines[0]), tool_lines
    assert re.fullmatch(r"● bash\(ls nothing-here\) ✗ exit 2 · \d+\.\ds", tool_lines[1]), tool_lines
    assert tool_lines[2].startswith("● read_file(missing.txt) ✗ ") and len(tool_lines[2]) > len("● read_file() ✗ ")


def test_piped_input_with_a_prompt_is_an_attachment_beside_it(run_cli, api):
    api.script(answer("Looks fine."))
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2 if b < c else 3\n"
    done = run_cli(["-p", "review this"], api, input=diff)
    assert done.returncode == 0
    prompt, attached = api.message_requests[0]["messages"][0]["content"][:2]
    assert prompt == {"type": "text", "text": "review this"}
    assert attached["text"].startswith('<context name="stdin" priority="P0">')
    assert "+a = 2 if b &lt; c else 3" in attached["text"]


def test_very_large_piped_input_is_cut_with_a_visible_notice(run_cli, api):
    api.script(answer("Skimmed."))
    done = run_cli(["-p", "skim"], api, input="x" * 300_000)
    assert done.returncode == 0
    assert "cut" in done.stderr.decode()
    attached = api.message_requests[0]["messages"][0]["content"][1]["text"]
    assert 'type="truncated"' in attached and len(attached) < 101_000


def test_the_step_limit_has_its_own_exit_code(run_cli, api):
    api.script(answer(tool_use("read_file", {"path": "nothing.txt"})))
    done = run_cli(["-p", "loop", "--max-steps", "1", "--output-format", "json"], api)
    assert done.returncode == 3
    record = json.loads(done.stdout)
    assert (record["subtype"], record["outcome"]) == ("error_max_turns", "step_limit")
    assert "--max-steps" in record["error"]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (failure(401, "authentication_error", "invalid x-api-key"), "rejected the API key"),
        (failure(404, "not_found_error", "model: claude-test"), "does not know model"),
    ],
)
def test_provider_failures_are_one_line_without_the_key(run_cli, api, reply, expected):
    api.script(reply)
    done = run_cli(["-p", "hi"], api)
    assert done.returncode == 1
    err = done.stderr.decode()
    assert expected in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert TEST_KEY not in err + done.stdout.decode()


def test_overload_after_retries_names_the_endpoint(run_cli, api):
    api.script(*[failure(529, "overloaded_error", "Overloaded") for _ in range(3)])
    done = run_cli(["-p", "hi"], api)
    assert done.returncode == 1
    err = done.stderr.decode()
    assert api.url in err.splitlines()[-1] and "3 attempts" in err and TEST_KEY not in err


def test_connection_refused_is_a_clear_line(run_cli):
    done = run_cli(["-p", "hi"], env={"ANTHROPIC_API_KEY": TEST_KEY, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    assert done.returncode == 1
    lines = done.stderr.decode().strip().splitlines()
    assert "Cannot connect to http://127.0.0.1:9" in lines[-1] and "connection refused" in lines[-1]
    # The long reason once, then a few words per retry while it stays the same.
    assert "Cannot connect" in lines[0] and all(line.startswith("! The same again.") for line in lines[1:-1])
    assert len(lines) > 2


def test_a_server_that_leaves_the_prompt_s_count_out_is_shown_the_estimate_not_a_handful(run_cli, api):
    """llama.cpp without `message_start` reports only output tokens: the context shown (json's context_tokens, the
    REPL's status line) is the estimate of what the conversation holds, thousands, not the dozen reported."""
    api.script(answer("Hello.", usage={"input_tokens": 0, "output_tokens": 9}))
    record = json.loads(run_cli(["-p", "hi", "--output-format", "json"], api).stdout)
    assert record["context_tokens"] > 1000  # the system prompt and tool schemas alone are thousands


def test_a_missing_key_names_the_provider_s_own_variable_even_when_anthropic_s_is_set(run_cli):
    done = run_cli(["-p", "hi", "--provider", "deepseek"], env={"ANTHROPIC_API_KEY": TEST_KEY, "DEEPSEEK_API_KEY": ""})
    assert done.returncode == 2
    said = done.stderr.decode()
    assert "DEEPSEEK_API_KEY" in said and "Set ANTHROPIC_API_KEY" not in said and TEST_KEY not in said


def test_a_local_server_that_is_not_listening_is_said_so_not_that_it_lists_no_models(run_cli):
    closed = ["--provider", "vllm", "--base-url", "http://127.0.0.1:9"]
    done = run_cli(["-p", "hi", *closed], env={"ANTHROPIC_API_KEY": ""})
    said = done.stderr.decode()
    assert done.returncode == 1 and "Nothing answers at http://127.0.0.1:9" in said and "lists none" not in said


def test_a_preset_s_unreachable_server_is_named_without_blaming_a_flag_never_given():
    from mini_agent.model.endpoints import PRESETS, connect_advice

    advice = connect_advice(PRESETS["ollama"].base_url, "ollama")
    assert "Is Ollama running there?" in advice and advice.endswith(".")
    assert connect_advice("http://10.0.0.5:11434", "ollama") == "Check --base-url / ANTHROPIC_BASE_URL."
    assert connect_advice("https://api.anthropic.com", None) == "Check --base-url / ANTHROPIC_BASE_URL."


def test_without_a_terminal_approval_is_refused_and_files_stay_untouched(run_cli, api, tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("original\n")
    api.script(
        answer(tool_use("read_file", {"path": "keep.txt"})),
        answer(tool_use("write_file", {"path": "keep.txt", "content": "changed\n"})),
        answer(tool_use("bash", {"command": "touch made-by-bash"})),
        answer("Could not."),
    )
    done = run_cli(["-p", "change it"], api)
    assert done.returncode == 4  # refused calls: the answer may rest on work not done
    assert target.read_text() == "original\n" and not (tmp_path / "made-by-bash").exists()
    write_result = api.message_requests[2]["messages"][-1]["content"][0]
    bash_result = api.message_requests[3]["messages"][-1]["content"][0]
    assert write_result["is_error"] and "--permission-mode accept-edits" in write_result["content"]
    assert bash_result["is_error"] and "--permission-mode auto" in bash_result["content"]


def test_auto_mode_still_refuses_destructive_commands_without_a_human(run_cli, api, tmp_path):
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious" / "data.txt").write_text("keep me")
    api.script(answer(tool_use("bash", {"command": "rm -rf *"})), answer("Refused."))
    done = run_cli(["-p", "clean up", "--yes"], api)
    assert done.returncode == 4
    assert (tmp_path / "precious" / "data.txt").read_text() == "keep me"
    result = api.message_requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] and "destructive" in result["content"]


def test_a_refused_call_is_reported_in_json_and_in_the_exit_status(run_cli, api, tmp_path):
    api.script(
        answer(tool_use("bash", {"command": "touch made-by-bash"}, id="b1")),
        answer(tool_use("write_file", {"path": "out.txt", "content": "x"}, id="w1")),
        answer("I could not make either file."),
    )
    done = run_cli(["-p", "make two files", "--output-format", "json"], api)
    assert done.returncode == 4, done.stderr
    assert not (tmp_path / "made-by-bash").exists() and not (tmp_path / "out.txt").exists()
    record = json.loads(done.stdout)
    assert (record["outcome"], record["exit_code"], record["is_error"]) == ("permission_denied", 4, True)
    assert record["subtype"] == "success"  # Claude Code's name: the model finished; the refusals are listed
    assert record["result"] == "I could not make either file."
    bash, write = record["permission_denials"]
    assert {k: bash[k] for k in ("tool_use_id", "tool", "input", "kind")} == {
        "tool_use_id": "b1",
        "tool": "bash",
        "input": "touch made-by-bash",
        "kind": "approval",
    }
    # Claude Code's fields beside them: its tool name, and the whole input.
    assert (bash["tool_name"], bash["tool_input"]) == ("Bash", {"command": "touch made-by-bash"})
    assert (write["tool_name"], write["tool_input"]) == ("Write", {"path": "out.txt", "content": "x"})

    assert "--permission-mode auto" in bash["allow"] and bash["reason"] and bash["rule"] is None
    assert write["tool"] == "write_file" and write["input"] == "out.txt"
    assert "--permission-mode accept-edits" in write["allow"]
    sent = api.message_requests[1]["messages"][-1]["content"][0]["content"]
    assert bash["message"] == sent  # the model and the script read the same refusal


def test_json_output_carries_claude_code_s_fields(run_cli, api):
    """total_cost_usd prices each model's usage at its own rates; duration_api_ms is the time spent on requests;
    num_turns counts them, as `claude -p --output-format json` does."""
    api.script(
        answer(tool_use("read_file", {"path": "nothing.txt"}), usage={"input_tokens": 1000, "output_tokens": 100}),
        answer("Done.", usage={"input_tokens": 2000, "output_tokens": 200}),
    )
    done = run_cli(["-p", "go", "--output-format", "json", "--model", "claude-sonnet-5-5"], api)
    record = json.loads(done.stdout)
    assert (record["subtype"], record["outcome"], record["num_turns"]) == ("success", "success", 2)
    assert record["total_cost_usd"] == pytest.approx((3000 * 2 + 300 * 10) / 1_000_000)
    assert record["modelUsage"]["claude-sonnet-5-5"]["outputTokens"] == 300
    assert 0 < record["duration_api_ms"] <= record["duration_ms"]
    api.script(answer("Free."))
    local = json.loads(run_cli(["-p", "go", "--output-format", "json", "--model", "qwen3-coder"], api).stdout)
    assert local["total_cost_usd"] is None and local["modelUsage"]["qwen3-coder"]["costUSD"] is None


def test_a_deny_rule_is_named_in_the_denial_and_stream_json_has_an_event_for_it(run_cli, api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "rm notes.txt"}, id="r1")), answer("Not allowed."))
    (tmp_path / "notes.txt").write_text("keep")
    args = ["-p", "remove notes", "--output-format", "stream-json", "--yes", "--deny", "bash(rm *)"]
    done = run_cli(args, api)
    assert done.returncode == 4, done.stderr
    assert (tmp_path / "notes.txt").read_text() == "keep"
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    types = [line["type"] for line in lines]
    assert types[types.index("tool_result") + 1] == "permission_denial"
    event = lines[types.index("permission_denial")]
    called = (event["tool_use_id"], event["tool"], event["input"], event["kind"])
    assert called == ("r1", "bash", "rm notes.txt", "rule")
    assert "bash(rm *)" in event["rule"] and event["allow"] == []
    assert lines[-1]["permission_denials"] == [{k: v for k, v in event.items() if k != "type"}]


def test_a_refusal_in_text_output_is_summed_up_on_stderr(run_cli, api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "touch x"})), answer("Could not."))
    done = run_cli(["-p", "touch x"], api)
    assert done.returncode == 4
    assert done.stdout.decode() == "Could not.\n"
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("mini-agent: refused bash(touch x): ") and "to allow it: " in last
    assert "--permission-mode auto" in last


def test_a_run_without_refusals_has_an_empty_list(run_cli, api):
    api.script(answer("Nothing to do."))
    done = run_cli(["-p", "hi", "--output-format", "json"], api)
    assert done.returncode == 0 and json.loads(done.stdout)["permission_denials"] == []


def test_show_prompt_prints_exactly_what_is_sent(run_cli, api):
    shown = run_cli(["--show-prompt", "-p", "hi"]).stdout.decode()
    api.script(answer("ok"))
    run_cli(["-p", "hi"], api)
    sent = api.message_requests[0]
    system_text = "\n".join(block["text"] for block in sent["system"])
    assert shown.startswith(system_text + "\n")
    schemas = json.loads(shown.split("# Tool schemas (the request's `tools` parameter)\n", 1)[1].split("\n", 1)[1])
    assert schemas == sent["tools"]
    assert "# Tools: how to use them well" in system_text and "\n---\n" in system_text


def test_the_key_is_masked_in_tool_output(run_cli, api, tmp_path):
    (tmp_path / "notes.txt").write_text(f"the key is {TEST_KEY}\n")  # commands do not get it from the environment
    api.script(answer(tool_use("bash", {"command": "cat notes.txt"})), answer("Checked."))
    done = run_cli(["-p", "show the notes", "--yes", "--output-format", "stream-json"], api)
    assert done.returncode == 0
    sent = api.message_requests[1]["messages"][-1]["content"][0]["content"]
    assert "the key is ****" in sent
    assert TEST_KEY not in done.stdout.decode() + done.stderr.decode()
    assert all(TEST_KEY not in json.dumps(r.body) for r in api.requests)


def test_an_empty_piped_prompt_is_a_usage_error(run_cli, api):
    done = run_cli([], api, input="  \n")
    assert done.returncode == 2 and "No prompt" in done.stderr.decode()
    assert api.message_requests == []


def test_compact_before_a_fresh_run_says_there_is_nothing_to_compact(run_cli, api):
    api.script(answer("Ok."))
    done = run_cli(["-p", "hello", "--compact", "--compact-focus", "the parser"], api)
    assert done.returncode == 0 and done.stdout.decode() == "Ok.\n"
    assert "Compaction (manual) did nothing: the conversation is empty." in done.stderr.decode()


def test_trace_shows_what_was_added_and_skipped_on_stderr(run_cli, api, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\n")
    api.script(answer("Done."), answer("Done again."))
    done = run_cli(["-p", "Summarise @notes.txt by tomorrow", "--trace"], api)
    err = done.stderr.decode()
    assert done.stdout.decode() == "Done.\n"
    assert "trace · original message (stored and sent unchanged): 'Summarise @notes.txt by tomorrow'" in err
    assert "enricher mentions" in err and "→ file:notes.txt" in err
    assert "block    file:notes.txt         P0" in err and "injected" in err
    assert "source   git_state              skipped" in err and "not a git repository" in err
    plain = run_cli(["-p", "Summarise @notes.txt"], api)  # without --trace, none of it
    assert "trace ·" not in plain.stderr.decode()


def test_a_one_shot_run_tells_the_model_nobody_can_answer_and_the_session_does_not_keep_it(run_cli, api, tmp_path):
    api.script(answer("Took the likely reading."), answer("Second run."))
    assert run_cli(["-p", "tidy up"], api).returncode == 0
    system = " ".join(block["text"] for block in api.message_requests[0]["system"])
    assert 'type="non_interactive"' in system and "nobody can answer" in system
    assert "Independent read-only calls" in system  # the static prompt asks for parallel reads
    sessions = list((tmp_path / "mini-agent-home").rglob("*.jsonl"))
    assert sessions and not any("non_interactive" in path.read_text() for path in sessions)
    assert run_cli(["-p", "again", "--continue"], api).returncode == 0
    again = " ".join(block["text"] for block in api.message_requests[1]["system"])
    assert again.count('type="non_interactive"') == 1


def test_the_context_trace_goes_out_only_with_trace(run_cli, api):
    api.script(answer("Traced."), answer("Traced again."))
    lines = [
        json.loads(line)
        for line in run_cli(["-p", "go", "--output-format", "stream-json", "--trace"], api).stdout.decode().splitlines()
    ]
    assert [line["type"] for line in lines][:2] == ["system", "trace"]
    assert lines[1]["original"] == "go" and {b["name"] for b in lines[1]["blocks"]} >= {"environment"}
    record = json.loads(run_cli(["-p", "go", "--output-format", "json", "--trace"], api).stdout)
    assert record["trace"]["original"] == "go"


@pytest.mark.parametrize(
    ("args", "stdin", "env", "said"),
    [
        (["--output-format", "json"], "  \n", {}, "No prompt"),
        (["-p", "hi", "--output-format", "stream-json"], None, {"ANTHROPIC_API_KEY": ""}, "No API key"),
        (["-p", "hi", "--output-format", "json"], None, {"MINI_AGENT_CONTEXT_BUDGET": "nine"}, "must be a number"),
    ],
)
def test_a_failure_before_the_first_request_is_still_one_json_result(run_cli, api, args, stdin, env, said):
    done = run_cli(args, api, input=stdin, env=env)
    assert done.returncode == 2
    record = json.loads(done.stdout)
    assert record["type"] == "result" and record["is_error"] and record["exit_code"] == 2 and said in record["error"]
    assert said in done.stderr.decode() and not api.message_requests


def test_typers_command_is_built_once_per_process(run_cli, api, monkeypatch):
    """Building the click command from the typer app costs ~10 ms: a `-p` run (which reads the root options
    first) builds it once, and every later invocation in the process (a warm server's forked worker) reuses it."""
    import typer.main

    from mini_agent.cli import main as cli

    built = []
    build = typer.main.get_command
    monkeypatch.setattr(cli, "_COMMAND", [])
    monkeypatch.setattr(typer.main, "get_command", lambda app: built.append(app) or build(app))
    api.script(answer("One."), answer("Two."))
    assert run_cli(["-p", "first"], api).stdout.strip() == b"One."
    assert run_cli(["-p", "second", "--output-format", "text"], api).stdout.strip() == b"Two."
    assert built == [cli.app]


def test_the_commands_annotations_are_objects_not_strings_typer_would_compile():
    """typer reads every command's annotations when it builds the command line; strings (a module with
    `from __future__ import annotations`) are compiled and evaluated each time, ~2/3 of the build."""
    import inspect

    from mini_agent.cli import main as cli

    def callbacks(app):
        found = [info.callback for info in app.registered_commands]
        if app.registered_callback is not None:
            found.append(app.registered_callback.callback)
        for group in app.registered_groups:
            found.extend(callbacks(group.typer_instance))
        return found

    declared = callbacks(cli.app)
    assert len(declared) > 10
    for callback in declared:
        for parameter in inspect.signature(callback).parameters.values():
            assert not isinstance(parameter.annotation, str), (callback.__qualname__, parameter.name)
