"""Claude Code's small habits in the REPL and in -p: `#note`, its slash command names, REPL commands in -p."""

from __future__ import annotations

import pytest
from support.fake_api import answer

from mini_agent.app.claude_names import FROM_THE_SHELL, INSTEAD
from mini_agent.app.custom_commands import REPL_BUILTINS


def memory_file(tmp_path):
    return tmp_path / "mini-agent-home" / "memory.md"


def test_a_hash_note_is_saved_to_memory_said_where_and_is_no_request(run_cli, api, tmp_path):
    api.script(answer("ok"))
    done = run_cli([], api, typed=["#always run ruff   before committing", "hello"])
    assert done.returncode == 0, done.stderr
    assert memory_file(tmp_path).read_text() == "- always run ruff before committing\n"
    assert f"Saved to {memory_file(tmp_path)}" in done.stdout.decode().replace("\n", "")
    (request,) = api.message_requests  # the note was no turn; the next turn's memory block carries it
    context = " ".join(block["text"] for block in request["messages"][-1]["content"])
    assert "always run ruff before committing" in context


@pytest.mark.parametrize("line", ["#123 fails on CI, look", "#!/bin/sh is the shebang?", "# Title\n\nbody text"])
def test_issue_numbers_shebangs_and_pasted_markdown_are_prompts(run_cli, api, tmp_path, line):
    api.script(answer("ok"))
    assert run_cli([], api, typed=[line.replace("\n", "\x1b\r")]).returncode == 0  # Esc Enter: a new line
    assert len(api.message_requests) == 1 and not memory_file(tmp_path).exists()


def test_every_claude_code_name_is_answered_with_what_to_use_instead(run_cli, api):
    done = run_cli([], api, typed=list(INSTEAD))
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.decode().split())
    for name, answer_text in INSTEAD.items():
        assert f"{name} is Claude Code's. {' '.join(answer_text.split())}" in shown
    assert "Did you mean" not in shown and api.message_requests == []


def test_a_name_is_either_a_command_here_or_answered_never_both():
    assert not set(INSTEAD) & set(REPL_BUILTINS)
    assert set(FROM_THE_SHELL) <= set(REPL_BUILTINS)


def test_a_custom_command_file_wins_over_the_answer(run_cli, api, tmp_path):
    (tmp_path / ".mini-agent" / "commands").mkdir(parents=True)
    (tmp_path / ".mini-agent" / "commands" / "review.md").write_text("Review the diff, $ARGUMENTS.")
    api.script(answer("Reviewed."))
    assert run_cli([], api, typed=["/review quickly"]).returncode == 0
    assert api.message_requests[0]["messages"][-1]["content"][0]["text"] == "Review the diff, quickly."


def test_status_config_permissions_doctor_and_quit(run_cli, api, tmp_path):
    done = run_cli(
        ["--model", "claude-st", "--permission-mode", "accept-edits"],
        api,
        typed=["/status", "/config", "/permissions", "/doctor", "/quit", "never read"],
    )
    assert done.returncode == 0, done.stderr
    shown = done.stdout.decode()
    assert "model     claude-st" in shown and f"endpoint  {api.url}" in shown and "mode      accept-edits" in shown
    assert f"cwd       {tmp_path}" in shown and "sandbox   " in shown
    assert "session   " in shown and "(none yet)" not in shown
    assert "max_steps" in shown and "Where each value comes from: mini-agent config" in shown  # /config
    assert "Permission mode: accept-edits" in shown  # /permissions
    assert f"endpoint: {api.url} answers" in shown or f"endpoint: {api.url} accepts" in shown  # /doctor
    assert "key: set" in shown and "mcp: no servers configured" in shown
    assert "never read" not in shown and api.message_requests == []  # /quit left


def test_doctor_says_when_the_endpoint_cannot_be_reached(run_cli, api):
    done = run_cli([], api, env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, typed=["/doctor"])
    assert "cannot be reached" in done.stdout.decode()


@pytest.mark.parametrize("name", ["/help", "/status", "/compact", "/undo", "/quit", "/vim", "/login", "/review"])
def test_a_repl_command_or_claude_code_name_in_p_is_a_usage_error_and_no_request(run_cli, api, name):
    done = run_cli(["-p", f"{name} now"], api)
    assert done.returncode == 2 and api.message_requests == []
    error = done.stderr.decode()
    assert f"{name} is a command of the interactive session" in error
    if name in FROM_THE_SHELL:
        assert FROM_THE_SHELL[name] in error


def test_a_misspelled_custom_command_in_p_is_a_usage_error_with_the_near_names(run_cli, api, tmp_path):
    (tmp_path / ".mini-agent" / "commands").mkdir(parents=True)
    (tmp_path / ".mini-agent" / "commands" / "deploy.md").write_text("Deploy $1.")
    done = run_cli(["-p", "/deplyo staging"], api)
    assert done.returncode == 2 and "Did you mean /deploy?" in done.stderr.decode()
    api.script(answer("Deployed."))
    assert run_cli(["-p", "/deploy staging"], api).returncode == 0  # the real one still works
    assert api.message_requests[0]["messages"][-1]["content"][0]["text"] == "Deploy staging."
    assert len(api.message_requests) == 1


def test_p_help_is_refused_before_any_mcp_server_starts(run_cli, api, tmp_path):
    marker = tmp_path / "server-started"
    config = tmp_path / "mini-agent-home" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[mcp_servers.probe]\ncommand = "sh"\nargs = ["-c", "touch {marker}; sleep 5"]\n')
    done = run_cli(["-p", "/help"], api)
    assert done.returncode == 2 and not marker.exists() and api.message_requests == []
