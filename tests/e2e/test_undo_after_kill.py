"""A one-shot run killed with kill -9 in the middle of a turn that changed files: its turn never ended, yet
`mini-agent undo` restores what it changed (the before-snapshot was logged before the first change)."""

from __future__ import annotations

import signal

from support import PATIENCE, alive, eventually, process_running, start_cli
from support.fake_api import answer, tool_use


def test_the_changes_of_a_run_killed_mid_turn_are_undone_by_the_undo_command(api, tmp_path, run_cli):
    (tmp_path / "app.py").write_text("print('old')\n")
    api.script(
        answer(tool_use("bash", {"command": "echo changed > app.py && echo x > made.txt"}, id="b1")),
        answer(tool_use("bash", {"command": "sleep 61.7373"}, id="b2")),
    )
    run = start_cli(api, tmp_path, "-p", "change things", "--yes", home=tmp_path / "mini-agent-home")
    sleeping = eventually(lambda: process_running("sleep", "61.7373"), "the second command running")
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=PATIENCE)
    eventually(lambda: not alive(sleeping), "the killed run's command ending")
    assert (tmp_path / "app.py").read_text() == "changed\n" and (tmp_path / "made.txt").exists()

    undone = run_cli(["undo"])

    output = undone.stdout.decode()
    assert undone.returncode == 0, output + undone.stderr.decode()
    assert (tmp_path / "app.py").read_text() == "print('old')\n" and not (tmp_path / "made.txt").exists()
    assert "modified app.py: undone" in output and "added made.txt: undone" in output
    again = run_cli(["undo"])  # recorded once: the turn is not found again
    assert again.returncode == 1 and "Nothing to undo" in again.stdout.decode()
