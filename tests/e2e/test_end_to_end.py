"""One task end to end with the installed command: read, edit, run bash, fetch a page served on loopback."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from support.fake_api import answer, tool_use

PAGE = b"""<html><head><title>Release notes</title><script>var tracking = 1;</script></head>
<body><nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
<main><h1>Version 2.0</h1><p>The <code>greet</code> function now says <strong>Hello</strong>.</p>
<ul><li>Faster</li><li>Smaller</li></ul></main></body></html>"""


@pytest.fixture
def web():
    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_read_edit_run_and_fetch(run_installed, api, web, tmp_path):
    source = tmp_path / "greet.py"
    source.write_text('def greet(name):\n    return "Hi " + name\n\n\nprint(greet("team"))\n')
    api.script(
        answer("First the notes.", tool_use("web_fetch", {"url": f"{web}/notes"}, id="w1")),
        answer("Now the code.", tool_use("read_file", {"path": "greet.py"}, id="r1")),
        answer(
            tool_use(
                "edit_file",
                {"path": "greet.py", "old_string": 'return "Hi " + name', "new_string": 'return "Hello " + name'},
                id="e1",
            )
        ),
        answer(tool_use("bash", {"command": "python3 greet.py"}, id="b1")),
        answer("greet now says Hello; running it prints `Hello team`."),
    )
    local_server = "--allow", "web_fetch(127.0.0.1)"  # loopback addresses ask even in auto mode
    done = run_installed(
        ["-p", "update greet.py to match the release notes", "--yes", *local_server, "--output-format", "json"],
        api,
        warm=True,  # the task end to end, not the process: through a warm server as a user's runs go
    )
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["result"] == "greet now says Hello; running it prints `Hello team`."
    assert 'return "Hello " + name' in source.read_text()

    def result(step: int) -> dict:
        return api.message_requests[step]["messages"][-1]["content"][0]

    fetched = result(1)["content"]
    assert "# Version 2.0" in fetched and "- Faster" in fetched and "`greet`" in fetched
    assert "tracking" not in fetched and "Home" not in fetched
    assert 'return "Hi " + name' in result(2)["content"]
    assert "Hello" in result(3)["content"] and not result(3).get("is_error")
    assert "Hello team" in result(4)["content"] and "exit code: 0" in result(4)["content"]
