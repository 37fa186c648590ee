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


def test_the_collector_pauses_for_start_up_and_resumes_with_start_ups_objects_frozen():
    import gc

    from mini_agent import gc_pause

    assert gc.isenabled() and not gc_pause.paused()
    try:
        gc_pause.pause()
        assert not gc.isenabled() and gc_pause.paused()
        made_while_paused = [[] for _ in range(100)]
        gc_pause.resume()
        assert gc.isenabled() and not gc_pause.paused()
        assert gc.get_freeze_count() > 0
        assert all(tracked is not made_while_paused for tracked in gc.get_objects()), "frozen: no collection walks it"
        frozen = gc.get_freeze_count()
        gc_pause.resume()  # a second resume (another thread's) changes nothing
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


def test_resuming_what_nothing_paused_does_nothing():
    """Tests and the warm worker run the CLI without entry.py's pause: their collector is left as it is."""
    import gc

    from mini_agent import gc_pause

    gc.unfreeze()
    gc_pause.resume()
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_a_held_collector_is_off_for_the_block_and_as_it_was_after_it():
    import gc

    from mini_agent import gc_pause

    with pytest.raises(KeyError):
        with gc_pause.held():
            assert not gc.isenabled()
            raise KeyError("the block fails")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_pause.held():
            assert not gc.isenabled()
        assert not gc.isenabled(), "off before: left off"
    finally:
        gc.enable()


def test_the_repls_first_line_resumes_the_collector_even_when_it_asks_no_model(run_cli, api):
    """A REPL used only for slash commands sends no request: its first line ends start-up all the same."""
    import gc

    from mini_agent import gc_pause

    gc_pause.pause()
    try:
        assert run_cli([], api, typed=["/help"]).returncode == 0
        assert gc.isenabled() and not gc_pause.paused()
    finally:
        gc_pause.resume()
        gc.unfreeze()
        gc.enable()
