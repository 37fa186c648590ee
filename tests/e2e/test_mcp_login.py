"""`mini-agent mcp login` as the installed command, its stdout a real pipe: the page to open is printed (and
flushed) before the command waits for the browser, which a person reads while it waits; then the tokens work."""

from __future__ import annotations

import os
import subprocess

from support import BIN, PATIENCE
from support.oauth import PRINTED_URL, Browser, start_server


def test_the_installed_command_prints_the_page_before_it_waits(tmp_path):
    server = start_server(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[mcp_servers.secure]\nurl = "{server.url}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update({"MINI_AGENT_HOME": str(home), "MINI_AGENT_NO_SERVER": "1", "NO_COLOR": "1"})
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    command = subprocess.Popen(
        [BIN, "mcp", "login", "secure"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path
    )
    try:
        printed = b""
        while not (found := PRINTED_URL.search(printed)):
            line = command.stdout.readline()
            assert line, f"the command ended without printing a page: {command.stderr.read().decode()}"
            printed += line
        Browser()(found.group(1).decode())
        out, err = command.communicate(timeout=PATIENCE)
        assert command.returncode == 0, err.decode()
        assert b"Logged in to secure: 2 tools." in out
        assert list((home / "mcp-oauth").glob("*.json"))
    finally:
        if command.poll() is None:
            command.kill()
        server.stop()
