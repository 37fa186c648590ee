"""Undo in runs of the command (in process): a one-shot `-p` run's changes (write_file, edit_file, bash, an MCP
tool) undone by `mini-agent undo` and by /undo in a REPL that continues the session; what cannot be restored
(ignored and oversized files) is reported and makes the exit status say so."""

from __future__ import annotations

import json
import sys

from support import MCP_SERVER, PATIENCE
from support.fake_api import answer, tool_use
from support.undo import a_changing_turn, a_project, tree


def test_a_one_shot_runs_changes_are_undone_by_the_undo_command(run_cli, api, tmp_path):
    project = a_project(tmp_path)
    before = tree(project)
    api.script(*a_changing_turn())
    done = run_cli(["-p", "change things", "--yes"], api)
    assert done.returncode == 0, done.stderr.decode()
    assert (project / "app.py").read_text() == "print('new')\n" and not (project / "gone.txt").exists()
    assert (project / "secret.txt").stat().st_mode & 0o777 == 0o644

    listed = run_cli(["undo", "--list"])
    assert listed.returncode == 0, listed.stderr.decode()
    assert "1. change things" in listed.stdout.decode()
    assert "modified app.py" in listed.stdout.decode() and "added new.txt" in listed.stdout.decode()

    undone = run_cli(["undo"])
    output = undone.stdout.decode()
    assert undone.returncode == 0, output + undone.stderr.decode()
    assert tree(project) == before  # byte for byte, and 0600 again
    assert "modified app.py: undone" in output and "added new.txt: undone" in output
    assert "permissions secret.txt: undone" in output and "deleted gone.txt: undone" in output
    assert not (project / "d").exists()

    again = run_cli(["undo"])
    assert again.returncode == 1 and "Nothing to undo" in again.stdout.decode()

    api.script(answer("Understood."))
    went_on = run_cli(["-p", "what happened?", "--continue"], api)
    assert went_on.returncode == 0, went_on.stderr.decode()
    told = json.dumps(api.message_requests[-1]["messages"][-1]["content"])
    assert 'type=\\"undo\\"' in told and "mini-agent undo" in told and "app.py" in told


def test_a_one_shot_run_is_undone_by_undo_in_a_continued_repl(run_cli, api, tmp_path):
    project = a_project(tmp_path)
    before = tree(project)
    api.script(*a_changing_turn())
    assert run_cli(["-p", "change things", "--yes"], api).returncode == 0

    done = run_cli(["--continue"], api, typed=["/undo"])
    assert done.returncode == 0, done.stderr.decode()
    shown = " ".join(done.stdout.decode().split())
    assert shown.index("Continuing session") < shown.index("app.py: undone") < shown.index("Nothing more to undo")
    assert tree(project) == before


def test_ignored_and_oversized_files_are_reported_as_not_restored(run_cli, api, tmp_path):
    project = tmp_path
    (project / ".gitignore").write_text("*.log\n")
    (project / "app.log").write_text("started\n")
    (project / "notes.txt").write_text("notes\n")
    with open(project / "big.bin", "wb") as big:
        big.truncate(51 * 1024 * 1024)  # sparse: over the 50 MB limit without writing it
    api.script(
        answer(
            tool_use(
                "bash",
                {"command": "echo more >> app.log && truncate -s 52M big.bin && echo changed > notes.txt"},
                id="b1",
            )
        ),
        answer("Done."),
    )
    assert run_cli(["-p", "change things", "--yes"], api).returncode == 0

    undone = run_cli(["undo", "--json"])

    assert undone.returncode == 1, undone.stderr.decode()
    record = json.loads(undone.stdout)
    assert record["restored"] == [{"path": "notes.txt", "kind": "modified"}]
    not_covered = {item["path"]: item["reason"] for item in record["not_covered"]}
    assert set(not_covered) == {"app.log", "big.bin"}
    assert "ignored" in not_covered["app.log"] and "larger than 50 MB" in not_covered["big.bin"]
    assert (project / "notes.txt").read_text() == "notes\n"
    assert (project / "app.log").read_text() == "started\nmore\n"


def test_a_file_an_mcp_tool_wrote_is_undone(run_cli, api, tmp_path):
    home = tmp_path / "mini-agent-home"
    home.mkdir()
    (home / "config.toml").write_text(
        # mcp_timeout: the first call must find the server ready, however long a loaded machine takes to start it
        f"mcp_timeout = {PATIENCE}\n"
        f"[mcp_servers.test]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(MCP_SERVER))}]\n"
    )
    (tmp_path / "report.md").write_text("# old report\n")
    target = str(tmp_path / "report.md")
    api.script(
        answer(tool_use("mcp__test__save", {"path": target, "text": "# overwritten by the server\n"}, id="m1")),
        answer(tool_use("mcp__test__save", {"path": str(tmp_path / "extra.md"), "text": "new\n"}, id="m2")),
        answer("Saved."),
    )
    done = run_cli(["-p", "save the report", "--allow", "mcp__test"], api)
    assert done.returncode == 0, done.stderr.decode()
    assert (tmp_path / "report.md").read_text() == "# overwritten by the server\n"

    undone = run_cli(["undo"])

    assert undone.returncode == 0, undone.stdout.decode() + undone.stderr.decode()
    assert (tmp_path / "report.md").read_text() == "# old report\n"
    assert not (tmp_path / "extra.md").exists()
