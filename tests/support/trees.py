"""Projects and file trees for end-to-end safety tests: a user's repository, and a byte-exact picture of a tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def make_repo(project: Path) -> Path:
    """A small git repository with a committed and an uncommitted change, as a user's project would be."""
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("print('hello')\n")
    (project / "README.md").write_text("# Project\n")
    subprocess.run([*GIT, "init", "-q"], cwd=project, check=True)
    subprocess.run([*GIT, "add", "."], cwd=project, check=True)
    subprocess.run([*GIT, "commit", "-qm", "one"], cwd=project, check=True)
    (project / "README.md").write_text("# Project\n\nUncommitted work.\n")
    (project / "untracked.txt").write_text("keep me\n")
    return project


def snapshot(directory: Path, with_git: bool = False) -> dict[str, bytes | str]:
    """Every file (and symlink target) under `directory`, by relative path; `.git` too when asked."""
    picture: dict[str, bytes | str] = {}
    for path in sorted(directory.rglob("*")):
        relative = path.relative_to(directory)
        if not with_git and ".git" in relative.parts:
            continue
        if path.is_symlink():
            picture[str(relative)] = f"-> {path.readlink()}"
        elif path.is_file():
            picture[str(relative)] = path.read_bytes()
        elif path.is_dir():
            picture[str(relative) + "/"] = ""
    return picture
