"""Sub-agents with the installed command: a real Ctrl-C reaches a sub-agent's command."""

from __future__ import annotations

from support.fake_api import answer, tool_use


def test_a_real_ctrl_c_reaches_a_sub_agents_command(api, tmp_path):
    from support import ctrl_c_while_running, start_cli

    api.script(
        answer(tool_use("task", {"description": "wait", "prompt": "sleep a while"}, id="t1")),
        answer(tool_use("bash", {"command": "exec sleep 60.7171"}, id="c1")),
    )
    process = start_cli(api, tmp_path, "-p", "delegate", "--yes", home=tmp_path / "home")
    ctrl_c_while_running(process, "sleep", "60.7171")
