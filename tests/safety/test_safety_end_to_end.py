"""Safety end to end: the command (run in process) in auto mode without a terminal, against the loopback model."""

from __future__ import annotations

import json

import pytest
from support import scripted_agent
from support.fake_api import answer, tool_use
from support.trees import make_repo, snapshot

DESTRUCTIVE = [
    "rm -rf ~",
    "rm -rf .",
    "git reset --hard HEAD~1",
    "git clean -fdx",
    "x=rm; $x -rf ~",
    "$(echo rm) -r src",
    "echo cm0gLXJmIHNyYw== | base64 -d | sh",
    "find . -delete",
    "bash -c 'rm -rf \"$PWD\"'",
]


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "project")


def results(api, index):
    return api.message_requests[index]["messages"][-1]["content"]


def test_in_auto_mode_without_a_terminal_destructive_commands_are_refused_and_nothing_changes(
    run_cli, api, repo, tmp_path
):
    home = tmp_path / "home"
    home.mkdir()
    (home / "precious.txt").write_text("mine\n")
    before, home_before = snapshot(repo), snapshot(home)
    calls = [tool_use("bash", {"command": command}, id=f"call{i}") for i, command in enumerate(DESTRUCTIVE)]
    api.script(answer(*calls), answer("I was not allowed to."))
    done = run_cli(["-p", "clean everything up", "--permission-mode", "auto"], api, cwd=repo, env={"HOME": str(home)})
    assert done.returncode == 4, done.stderr
    refused = results(api, 1)
    assert len(refused) == len(DESTRUCTIVE)
    for block, command in zip(refused, DESTRUCTIVE, strict=True):
        assert block["is_error"], command
        assert "Not run" in block["content"] and "destructive" in block["content"], (command, block["content"])
    assert snapshot(repo) == before and snapshot(home) == home_before
    assert "Uncommitted work." in (repo / "README.md").read_text()


def test_read_only_commands_run_in_every_mode_without_asking(run_cli, api, repo):
    api.script(
        answer(
            tool_use("bash", {"command": "git status --short && ls src | wc -l"}, id="a"),
            tool_use("bash", {"command": "grep -rn hello src; git log --oneline -1"}, id="b"),
        ),
        answer("Looked."),
    )
    done = run_cli(["-p", "look around"], api, cwd=repo)  # default mode, no terminal: nobody to ask
    assert done.returncode == 0, done.stderr
    first, second = results(api, 1)
    assert not first.get("is_error") and "README.md" in first["content"] and "untracked.txt" in first["content"]
    assert not second.get("is_error") and "print('hello')" in second["content"] and "one" in second["content"]


def test_an_edit_outside_the_workspace_is_refused_even_in_auto_mode(run_cli, api, repo, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched\n")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    api.script(
        answer(tool_use("read_file", {"path": str(outside)})),
        answer(
            tool_use("edit_file", {"path": str(outside), "old_string": "untouched", "new_string": "changed"}, id="e"),
            tool_use("write_file", {"path": "../sneaky.txt", "content": "x"}, id="w"),
            tool_use("write_file", {"path": "src/new.py", "content": "x = 1\n"}, id="ok"),
        ),
        answer("Done what I could."),
    )
    done = run_cli(
        ["-p", "edit", "--permission-mode", "auto", "--output-format", "json"],
        api,
        cwd=repo,
        env={"TMPDIR": str(scratch)},
    )
    assert done.returncode == 4, done.stderr
    edit, write, inside = results(api, 2)
    assert edit["is_error"] and "outside the working directory" in edit["content"]
    assert f"--allow 'edit_file({outside})'" in edit["content"]
    assert write["is_error"] and not (tmp_path / "sneaky.txt").exists()
    assert not inside.get("is_error") and (repo / "src" / "new.py").read_text() == "x = 1\n"
    assert outside.read_text() == "untouched\n"
    assert json.loads(done.stdout)["result"] == "Done what I could."


def test_an_exact_allow_flag_lets_one_destructive_command_through(run_cli, api, repo):
    api.script(answer(tool_use("bash", {"command": "git reset --hard"})), answer("Reset."))
    done = run_cli(["-p", "reset", "--allow", "bash(git reset --hard)"], api, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert not results(api, 1)[0].get("is_error")
    assert "Uncommitted work." not in (repo / "README.md").read_text()


def test_bypass_runs_everything_with_a_warning_and_deny_rules_still_hold(run_cli, api, repo):
    api.script(
        answer(
            tool_use("bash", {"command": "rm -rf src"}, id="rm"),
            tool_use("bash", {"command": "curl -s https://example.com"}, id="curl"),
        ),
        answer("Gone."),
    )
    done = run_cli(["-p", "go", "--dangerously-skip-permissions", "--deny", "bash(curl *)"], api, cwd=repo)
    assert done.returncode == 4, done.stderr
    assert "WARNING" in done.stderr.decode() and "disposable sandbox" in done.stderr.decode()
    removed, curl = results(api, 1)
    assert not removed.get("is_error") and not (repo / "src").exists()
    assert curl["is_error"] and "denied by the rule deny bash(curl *)" in curl["content"]


def test_a_name_resolving_to_loopback_asks_at_connect_time_and_an_always_answer_holds(
    api, settings_for, tmp_path, monkeypatch
):
    """The real agent and web_fetch: the policy sees only a public-looking name; the address is checked later."""
    import importlib
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    from mini_agent.safety.permissions import Allow

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"internal dashboard")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    Thread(target=server.serve_forever, daemon=True).start()
    web_connect = importlib.import_module("mini_agent.tools.web_connect")
    monkeypatch.setattr(web_connect, "resolve", lambda host, port: ["127.0.0.1"])
    port = server.server_address[1]
    asked = []

    def confirm(request):
        asked.append(request)
        (grant,) = request.ask.grants
        return Allow("always", grant.rules)

    api.script(
        answer(tool_use("web_fetch", {"url": f"http://dash.example:{port}/a"})),
        answer(tool_use("web_fetch", {"url": f"http://dash.example:{port}/b"})),
        answer("Seen."),
    )
    settings = settings_for(api, permission_mode="auto")
    agent = scripted_agent(settings, confirm=confirm)
    try:
        agent.run_turn("look at the dashboard")
    finally:
        server.shutdown()
        server.server_close()
    assert len(asked) == 1 and "dash.example resolves to 127.0.0.1, a loopback address" in asked[0].reason
    for index in (1, 2):
        block = results(api, index)[0]
        assert not block.get("is_error") and "internal dashboard" in block["content"]


def test_without_a_terminal_a_private_fetch_is_refused_with_the_rule_that_would_allow_it(run_cli, api):
    api.script(answer(tool_use("web_fetch", {"url": "http://169.254.169.254/latest/meta-data/"})), answer("No."))
    done = run_cli(["-p", "read the metadata", "--yes"], api)
    assert done.returncode == 4, done.stderr
    block = results(api, 1)[0]
    assert block["is_error"] and "cloud metadata address" in block["content"]
    assert "--allow 'web_fetch(169.254.169.254)'" in block["content"]
    # refused after DNS, inside the tool: still reported as a denial, with the flag that would allow it
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("mini-agent: refused web_fetch(http://169.254.169.254/latest/meta-data/): ")
    assert last.endswith("to allow it: --allow 'web_fetch(169.254.169.254)'")


def test_ordinary_work_in_auto_mode_runs_without_a_question(run_cli, api, repo, tmp_path):
    """Edit, build, test and commit inside the project: the protections of the sandbox, the git guard, the
    seccomp filter and the classifier must not cost ordinary work a single question."""
    import subprocess

    home = tmp_path / "home"
    home.mkdir()
    (repo / "Makefile").write_text("build:\n\tmkdir -p build && cp src/app.py build/app.py\n")
    (repo / "test_app.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    identity = "-c user.name=Agent -c user.email=agent@example.com"
    steps = [
        tool_use("read_file", {"path": "src/app.py"}),
        tool_use("edit_file", {"path": "src/app.py", "old_string": "hello", "new_string": "hello, world"}),
        tool_use("write_file", {"path": "src/util.py", "content": "VALUE = 1\n"}),
        tool_use("bash", {"command": "make build"}),
        tool_use("bash", {"command": "python3 -m pytest -q -p no:cacheprovider test_app.py"}),
        tool_use("bash", {"command": "git checkout -q -b feature && git add -A"}),
        tool_use("bash", {"command": f"git {identity} commit -qm 'Say hello to the world'"}),
        tool_use("bash", {"command": "git log --oneline -1 && git status --short"}),
    ]
    api.script(*[answer(step) for step in steps], answer("Done."))
    env = {"HOME": str(home)}
    done = run_cli(
        ["-p", "make the change", "--permission-mode", "auto", "--output-format", "json"], api, cwd=repo, env=env
    )
    record = json.loads(done.stdout)
    assert done.returncode == 0, (done.stderr, record)
    assert record["permission_denials"] == []
    for index in range(1, len(steps) + 1):
        (result,) = results(api, index)
        assert not result.get("is_error"), (steps[index - 1], result)
    log = subprocess.run(["git", "log", "--format=%s", "-1", "feature"], cwd=repo, capture_output=True, text=True)
    assert log.stdout.strip() == "Say hello to the world"
    assert (repo / "build" / "app.py").read_text() == "print('hello, world')\n"
    assert "!" not in done.stderr.decode().replace("!=", "")  # nothing to tell the human: ordinary work


def test_claude_code_s_rule_spelling_works_in_flags(run_cli, api, repo):
    """`Bash(touch:*)` lets a command through in default mode as `bash(touch *)` would; `Read(./README.md)` denies."""
    api.script(
        answer(
            tool_use("bash", {"command": "touch made.txt"}, id="touch"),
            tool_use("read_file", {"path": "README.md"}, id="read"),
        ),
        answer("Done."),
    )
    flags = ["--allow", "Bash(touch:*)", "--deny", "Read(./README.md)"]
    done = run_cli(["-p", "go", *flags], api, cwd=repo)
    assert done.returncode == 4, done.stderr  # a call was refused
    touched, read = results(api, 1)
    assert not touched.get("is_error") and (repo / "made.txt").exists()
    assert read["is_error"] and "read_file(./README.md)" in read["content"]
