"""Hooks with the installed command: a real Ctrl-C during a hook stops the hook and the run; SIGTERM and SIGHUP
run the SessionEnd hooks, and the process still ends by the signal."""

from __future__ import annotations

import signal

import pytest
from support import PATIENCE, ctrl_c_while_running, eventually, process_running, start_cli
from support.fake_api import answer, tool_use
from support.hooks import events_in, hook, recording, user_config


def test_ctrl_c_during_a_hook_stops_the_hook_and_the_run(api, tmp_path):
    user_config(tmp_path, hook("PreToolUse", "sleep 60.8181"))
    api.script(answer(tool_use("bash", {"command": "touch ran"})))
    process = start_cli(api, tmp_path, "-p", "go", "--yes", home=tmp_path / "mini-agent-home")
    ctrl_c_while_running(process, "sleep", "60.8181")
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_runs_the_session_end_hooks_and_still_ends_the_process_by_it(api, tmp_path, signum):
    log = tmp_path / "ended"
    user_config(tmp_path, hook("SessionEnd", recording(log)))
    api.script(answer(tool_use("bash", {"command": "exec sleep 59.4242"})))  # the agent busy when the signal comes
    process = start_cli(api, tmp_path, "-p", "go", "--permission-mode", "bypass", home=tmp_path / "mini-agent-home")
    try:
        eventually(lambda: process_running("sleep", "59.4242"), "the command running")
        process.send_signal(signum)
        _, err = process.communicate(timeout=PATIENCE)
        assert process.returncode == -signum, err.decode()
        (ended,) = events_in(log)
        assert ended["hook_event_name"] == "SessionEnd" and ended["reason"] == "other"
    finally:
        process.kill()
        process.wait()
        api.replies.clear()
