"""The command's first steps decide whether a run that found no warm server starts one (entry.worth_a_server)."""

from __future__ import annotations

import pytest

from mini_agent.entry import ONE_OFF_COMMANDS, worth_a_server


def no_terminal(fd: int) -> bool:
    return False


def terminal(fd: int) -> bool:
    return fd == 1


@pytest.mark.parametrize("command", ONE_OFF_COMMANDS)
def test_no_server_after_a_one_off_subcommand(command):
    assert not worth_a_server([command, "--json"], {}, terminal)


@pytest.mark.parametrize("value", ["true", "1", "yes", "GitHub"])
def test_no_server_in_ci_without_a_terminal(value):
    assert not worth_a_server(["-p", "task"], {"CI": value}, no_terminal)
    assert worth_a_server(["-p", "task"], {"CI": value}, terminal)  # a person at a CI machine's terminal


@pytest.mark.parametrize("env", [{}, {"CI": ""}, {"CI": "false"}, {"CI": "0"}])
def test_a_server_after_an_ordinary_run(env):
    assert worth_a_server(["-p", "task"], env, no_terminal)
    assert worth_a_server([], env, terminal)
    assert worth_a_server(["fix the bug"], env, terminal)


def test_a_terminal_that_cannot_be_asked_is_no_terminal():
    def broken(fd: int) -> bool:
        raise OSError("bad file descriptor")

    assert not worth_a_server(["-p", "task"], {"CI": "true"}, broken)
