"""A project and a turn that changes it every way a tool can, for the undo tests; `tree()` to compare before
and after."""

from __future__ import annotations

import os
from pathlib import Path

from support.fake_api import answer, tool_use


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
                {
                    "command": "printf 'rewritten' > data.txt && chmod 644 secret.txt && rm gone.txt && mkdir -p d"
                    " && echo x > d/made.txt"
                },
                id="b1",
            )
        ),
        answer("Done."),
    ]
