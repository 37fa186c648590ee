"""Hooks with the installed command: a real Ctrl-C during a hook stops the hook and the run."""

from __future__ import annotations

from support import ctrl_c_while_running, start_cli
from support.fake_api import answer, tool_use
from support.hooks import hook, user_config


def test_ctrl_c_during_a_hook_stops_the_hook_and_the_run(api, tmp_path):
    user_config(tmp_path, hook("PreToolUse", "sleep 60.8181"))
    api.script(answer(tool_use("bash", {"command": "touch ran"})))
    process = start_cli(api, tmp_path, "-p", "go", "--yes", home=tmp_path / "mini-agent-home")
    ctrl_c_while_running(process, "sleep", "60.8181")
    assert not (tmp_path / "ran").exists()
