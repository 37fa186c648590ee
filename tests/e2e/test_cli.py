"""The installed `mini-agent` command as a subprocess: --version and --help (answered before cli/), python -m, one
run per output format, a real pipe and a silent socket on stdin, the interpreter's stream encoding, Ctrl-C.

The output formats and the pipe go through the test process's warm server (support/shared_server.py): what they
print is the subject, and test_warm.py shows the warm path prints what a fresh process prints. The encoding, the
socket on stdin and Ctrl-C run in a fresh process, as the first run on a machine does."""

from __future__ import annotations

import json
import os
import re
import subprocess

from support import BIN, PATIENCE, TEST_KEY, ctrl_c_while_running, start_cli
from support.fake_api import answer, tool_use

from mini_agent import __version__


def test_version_and_help_need_no_key_and_no_network(run_installed):
    version = run_installed(["--version"])
    assert (version.returncode, version.stdout.decode().strip()) == (0, f"mini-agent {__version__}")
    shown = run_installed(["--help"])
    assert shown.returncode == 0
    for flag in (
        "--print",
        "--output-format",
        "--model",
        "--base-url",
        "--permission-mode",
        "--max-steps",
        "--show-prompt",
    ):
        assert flag in shown.stdout.decode()


def test_python_dash_m_works_too(tmp_path):
    import sys

    done = subprocess.run([sys.executable, "-m", "mini_agent", "--version"], capture_output=True, cwd=tmp_path)
    assert done.stdout.decode().strip() == f"mini-agent {__version__}"


def test_text_output_prints_the_answer_on_stdout_and_progress_on_stderr(run_installed, api, tmp_path):
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n")
    api.script(answer("Reading it.", tool_use("read_file", {"path": "notes.txt"})), answer("It has two lines."))
    done = run_installed(["-p", "how many lines in notes.txt?"], api, warm=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode() == "It has two lines.\n"
    progress = done.stderr.decode()
    assert "Reading it." in progress and "read_file(notes.txt)" in progress
    result = api.message_requests[1]["messages"][-1]["content"][0]
    assert "alpha" in result["content"] and "beta" in result["content"]


def test_text_progress_uses_ascii_glyphs_where_stderr_cannot_encode_others(run_installed, api):
    api.script(answer(tool_use("bash", {"command": "ls nothing-here"})), answer("Done."))
    done = run_installed(["-p", "look"], api, env={"PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\* bash\(ls nothing-here\) x exit 2 \| \d+\.\ds$", done.stderr.decode(), re.MULTILINE)


def test_a_piped_prompt_is_the_task(run_installed, api):
    api.script(answer("Done."))
    done = run_installed([], api, input="summarise the repo\n", warm=True)
    assert done.returncode == 0 and done.stdout.decode() == "Done.\n"
    assert api.message_requests[0]["messages"][0]["content"][0]["text"] == "summarise the repo\n"


def test_json_output_is_one_object(run_installed, api):
    api.script(
        answer(tool_use("bash", {"command": "echo hi"})),
        answer("Said hi.", usage={"input_tokens": 50, "output_tokens": 5}),
    )
    done = run_installed(["-p", "say hi", "--output-format", "json", "--yes"], api, warm=True)
    assert done.returncode == 0
    record = json.loads(done.stdout)
    assert {k: record[k] for k in ("type", "subtype", "is_error", "result", "steps", "stop_reason", "exit_code")} == {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "result": "Said hi.",
        "steps": 2,
        "stop_reason": "end_turn",
        "exit_code": 0,
    }
    assert record["usage"] == {
        "input_tokens": 150,
        "output_tokens": 25,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    assert isinstance(record["duration_ms"], int) and record["context_window"] == 200_000


def test_stream_json_prints_a_line_per_step(run_installed, api):
    api.script(answer("Checking.", tool_use("bash", {"command": "echo streamed"}, id="b1")), answer("Finished."))
    done = run_installed(["-p", "go", "--output-format", "stream-json", "--permission-mode", "auto"], api, warm=True)
    assert done.returncode == 0
    lines = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [line["type"] for line in lines] == [
        "system",
        "assistant",
        "tool_call",
        "user",  # Claude Code's record of the result going back to the model
        "tool_result",
        "assistant",
        "result",
    ]
    tools = ["read_file", "write_file", "edit_file", "bash", "job_output", "stop_job", "web_fetch", "todo_write"]
    tools += ["exit_plan_mode", "task"]
    assert lines[0]["tools"] == tools
    assert lines[0]["session_id"] and lines[0]["session_id"] == lines[-1]["session_id"]
    assert "trace" not in lines[-1]  # bulky: only with --trace
    assert lines[2] == {
        "type": "tool_call",
        "id": "b1",
        "name": "bash",
        "input": {
            "command": "echo streamed",
            "timeout": 120,
            "description": None,
            "outside_sandbox": False,
            "run_in_background": False,
        },
    }
    (block,) = lines[3]["message"]["content"]
    assert block["tool_use_id"] == "b1" and "streamed" in block["content"] and block["is_error"] is False
    assert "streamed" in lines[4]["content"] and lines[4]["is_error"] is False
    assert lines[-1]["result"] == "Finished." and lines[-1]["steps"] == 2


def test_ctrl_c_kills_the_running_command_and_exits_130(api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "echo begun; exec sleep 60.4242"})))  # sandboxed: found by argv
    process = start_cli(api, tmp_path, "-p", "sleep", "--yes")
    err = ctrl_c_while_running(process, "sleep", "60.4242")
    assert "Interrupted" in err
    # Not only "Interrupted.": the call's line and what it printed, as the model got them.
    assert "bash(echo begun; exec sleep 60.4242)" in err and "interrupted" in err and "    begun" in err


def test_a_silent_socket_on_stdin_beside_p_is_given_up_on_within_a_second_and_said(api, tmp_path):
    """A socket a runner left open gets a second, not the five seconds a pipe's producer gets; the notice says
    which wait it took (no clock in the test: a loaded machine made a 4.5 s bound on the whole run fail)."""
    import socket

    api.script(answer("Done without stdin."))
    keep, given = socket.socketpair()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY=TEST_KEY,
        ANTHROPIC_MODEL="claude-test",
        MINI_AGENT_HOME=str(tmp_path / "home"),
        MINI_AGENT_NO_SERVER="1",
    )
    with keep, given:
        done = subprocess.run(
            [str(BIN), "-p", "hi"], stdin=given.fileno(), capture_output=True, env=env, cwd=tmp_path, timeout=PATIENCE
        )
    assert done.returncode == 0 and done.stdout.decode() == "Done without stdin.\n"
    assert "stdin is open but sent nothing in 1 s; ignoring it." in done.stderr.decode()


def test_help_shows_each_subcommand_whole_and_check_command_names_its_argument(run_installed):
    listing = run_installed(["--help"], env={"COLUMNS": "100"}).stdout.decode()
    commands = listing.split("Commands:", 1)[1]
    for name in ("permissions", "check-command", "config", "sandbox"):
        assert name in commands
    assert "..." not in commands  # no description cut short
    from mini_agent.errors import ExitStatus

    epilog = " ".join(listing.split("Exit codes:", 1)[1].split())
    assert all(f"{int(status)} " in epilog for status in ExitStatus), epilog  # every exit status is explained
    usage = run_installed(["check-command", "--help"]).stdout.decode()
    assert "COMMAND" in usage.splitlines()[0] and "COMMAND" in usage.split("Arguments:", 1)[1]
