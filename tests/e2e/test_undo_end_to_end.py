"""Undo end to end with the installed command: a one-shot `-p` run's changes (write_file, edit_file, bash, an MCP
tool) undone by `mini-agent undo` and by /undo in a REPL that continues the session; what cannot be restored
(ignored and oversized files) is reported and makes the exit status say so."""

from __future__ import annotations
import os
from pathlib import Path
from support.fake_api import answer, tool_use
from support.repl import finish, spawn


def tree(root: Path) -> dict[str, tuple[bytes, str]]:
    """Every file under root but mini-agent's home and .git: its bytes and its permission bits."""
    state = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = [name for name in dirs if name not in (".git", "mini-agent-home")]
        for name in names:
            path = Path(directory) / name
            state[str(path.relative_to(root))] = (path.read_bytes(), oct(path.lstat().st_mode & 0o777))
    return state


def a_project(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text("print('old')\n")
    (tmp_path / "data.txt").write_bytes(b"\x00binary\r\nbytes\xff")
    (tmp_path / "secret.txt").write_text("private\n")
    (tmp_path / "secret.txt").chmod(0o600)
    (tmp_path / "gone.txt").write_text("deleted by the turn\n")
    return tmp_path


def a_changing_turn() -> list:
    return [
        answer(tool_use("write_file", {"path": "new.txt", "content": "created\n"}, id="w1")),
        answer(tool_use("read_file", {"path": "app.py"}, id="r1")),
        answer(tool_use("edit_file", {"path": "app.py", "old_string": "old", "new_string": "new"}, id="e1")),
        answer(
            tool_use(
                "bash",
                {"command": "printf 'rewritten' > data.txt && chmod 644 secret.txt && rm gone.txt && mkdir -p d"
                 " && echo x > d/made.txt"},
                id="b1",
            )
        ),
        answer("Done."),
    ]


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
