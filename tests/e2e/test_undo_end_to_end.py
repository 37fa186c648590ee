"""Undo with the installed command: a one-shot `-p` run's changes undone by /undo in a real REPL (a pseudo-terminal)
that continues the session. tests/undo/test_undo_runs.py has the rest, in process."""

from __future__ import annotations

from support.repl import finish, spawn
from support.undo import a_changing_turn, a_project, tree


def test_a_one_shot_run_is_undone_by_undo_in_a_continued_repl(run_installed, api, tmp_path):
    project = a_project(tmp_path)
    before = tree(project)
    api.script(*a_changing_turn())
    assert run_installed(["-p", "change things", "--yes"], api).returncode == 0

    child = spawn(api, project, "--continue")
    child.expect("Continuing session")
    child.expect("›")
    child.sendline("/undo")
    child.expect("app.py: undone")
    child.expect("Nothing more to undo")
    child.expect("›")
    child.sendcontrol("d")
    assert finish(child) == 0
    assert tree(project) == before
