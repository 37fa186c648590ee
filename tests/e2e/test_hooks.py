"""Hooks end to end: the installed command, real shell commands as hooks, the loopback model; what each event's
hook gets on stdin and what its exit status and output do."""

from __future__ import annotations
from pathlib import Path

from support import ctrl_c_while_running, start_cli
from support.fake_api import answer, tool_use
from support.hooks import hook


def user_config(tmp_path: Path, text: str) -> None:
    home = tmp_path / "mini-agent-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)


def test_ctrl_c_during_a_hook_stops_the_hook_and_the_run(api, tmp_path):
    user_config(tmp_path, hook("PreToolUse", "sleep 60.4343"))
    api.script(answer(tool_use("bash", {"command": "touch ran"})))
    process = start_cli(api, tmp_path, "-p", "go", "--yes", home=tmp_path / "mini-agent-home")
    ctrl_c_while_running(process, "sleep", "60.4343")
    assert not (tmp_path / "ran").exists()
