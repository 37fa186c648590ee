"""The front ends read one Environment (app/environment.py), and `mini_agent.cli.main.run_in_process` runs the
command in the caller's process: its exit status returned, its output on the environment's streams, the process
left as it was."""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

from support import TEST_KEY
from support.fake_api import answer, tool_use
from support.in_process import environment

from mini_agent.app.environment import Environment
from mini_agent.cli.main import run_in_process as run


def variables(api, home: Path, **more: str) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": TEST_KEY,
        "ANTHROPIC_MODEL": "claude-test",
        "MINI_AGENT_HOME": str(home),
        "MINI_AGENT_NO_SERVER": "1",
        "NO_COLOR": "1",
        **more,
    }


def test_a_run_reads_its_streams_variables_and_directory_from_the_environment_and_leaves_the_process_as_it_was(
    api, tmp_path, capfd
):
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("alpha\n")
    api.script(answer(tool_use("bash", {"command": "cat notes.txt; echo $ONLY_IN_THE_RUN"})), answer("Read."))
    world = environment(b"", variables(api, tmp_path / "home", ONLY_IN_THE_RUN="from-the-run"), project)
    before = (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr)

    status = run(["-p", "read it", "--yes", "--output-format", "json"], world)

    assert status == 0, world.stderr.buffer.getvalue()
    record = json.loads(world.stdout.buffer.getvalue())
    assert record["result"] == "Read." and record["exit_code"] == 0
    result = api.message_requests[1]["messages"][-1]["content"][0]["content"]
    assert "alpha" in result and "from-the-run" in result  # the command ran in the run's directory and variables
    assert (dict(os.environ), os.getcwd(), sys.stdin, sys.stdout, sys.stderr) == before
    assert "ONLY_IN_THE_RUN" not in os.environ
    assert capfd.readouterr() == ("", "")  # nothing reached the real streams


def test_the_exit_status_is_returned_not_raised_and_errors_go_to_the_environments_stderr(tmp_path):
    world = environment(b"", {"PATH": os.environ["PATH"], "MINI_AGENT_HOME": str(tmp_path / "home")}, tmp_path)

    assert run(["-p", "hello"], world) == 2
    assert "ANTHROPIC_API_KEY" in world.stderr.buffer.getvalue().decode()
    assert run(["-p", "x", "--output-format", "yaml"], world) == 2


def test_piped_input_comes_from_the_environments_stdin(api, tmp_path):
    api.script(answer("Summed up."))
    world = environment(b"the task, piped", variables(api, tmp_path / "home"), tmp_path)

    assert run([], world) == 0, world.stderr.buffer.getvalue()
    assert world.stdout.buffer.getvalue() == b"Summed up.\n"
    first = api.message_requests[0]["messages"][0]["content"]
    assert any(block.get("text") == "the task, piped" for block in first), first


def test_the_real_environment_is_the_interpreters():
    real = Environment.of_process()
    assert (real.stdout, real.stderr, real.variables, real.cwd) == (sys.stdout, sys.stderr, os.environ, Path.cwd())


def test_installing_an_environment_is_undone_even_when_the_run_fails(tmp_path):
    world = Environment(io.StringIO(), io.StringIO(), io.StringIO(), variables={"ONLY": "1"}, cwd=tmp_path)
    cwd = os.getcwd()
    try:
        with world.installed():
            assert os.environ.get("ONLY") == "1" and os.getcwd() == str(tmp_path) and sys.stdout is world.stdout
            raise RuntimeError("the run failed")
    except RuntimeError:
        pass
    assert "ONLY" not in os.environ and os.getcwd() == cwd and sys.stdout is not world.stdout
