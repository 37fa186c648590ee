"""The root command's options are read without pydantic (cli/plain_values.py), to the same values as typer's own."""

from __future__ import annotations

import subprocess
import sys

import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from mini_agent.cli.main import app


def parsed(argv: list[str]) -> dict:
    """The root command's values for `argv`, parsed as the command parses them (no callback runs)."""
    command = typer.main.get_command(app)
    with command.make_context("mini-agent", list(argv), resilient_parsing=False) as context:
        return dict(context.params)


def test_parsing_the_root_options_imports_no_pydantic():
    probe = (
        "import sys, typer\n"
        "from mini_agent.cli.main import app\n"
        "command = typer.main.get_command(app)\n"
        "args = ['--max-steps', '3', '--compact-threshold', '0.5', '--allow', 'bash(ls)', '--model', 'm', '-c']\n"
        "context = command.make_context('mini-agent', args)\n"
        "print(context.params['max_steps'], context.params['compact_threshold'], context.params['allow'])\n"
        "print('pydantic' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.splitlines() == ["3 0.5 ['bash(ls)']", "False"], done.stderr


@settings(max_examples=40, deadline=None)
@given(
    steps=st.integers(min_value=-(10**12), max_value=10**12),
    threshold=st.floats(allow_nan=False, allow_infinity=False, width=32),
    rules=st.lists(st.text(min_size=1).filter(lambda s: not s.startswith("-") and "\0" not in s), max_size=3),
)
def test_values_read_as_their_annotations(steps, threshold, rules):
    argv = ["--max-steps", str(steps), "--compact-threshold", repr(threshold)]
    for rule in rules:
        argv += ["--deny", rule]
    values = parsed(argv)
    assert values["max_steps"] == steps and type(values["max_steps"]) is int
    assert values["compact_threshold"] == threshold and type(values["compact_threshold"]) is float
    assert values["deny"] == rules and values["allow"] == []
    assert values["model"] is None and values["output_format"] == "text" and values["trace"] is False


def test_a_value_that_is_not_a_number_is_a_usage_error_naming_the_option(run_cli, api):
    done = run_cli(["--max-steps", "many", "-p", "hi"], api)
    assert done.returncode == 2
    assert "--max-steps" in done.stderr.decode() and "'many' is not an integer" in done.stderr.decode()
    done = run_cli(["--compact-threshold", "half", "-p", "hi"], api)
    assert done.returncode == 2 and "'half' is not a number" in done.stderr.decode()
    assert api.message_requests == []
