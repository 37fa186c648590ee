"""Undo through a shadow git repository: real git, real files, real bash, in git repositories and plain dirs."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import PATIENCE

from mini_agent.undo import (
    IGNORED,
    Change,
    Checkpoint,
    RestoreResult,
    Skipped,
    Snapshots,
    UndoReport,
    UndoStack,
    Unrecorded,
    project_root,
    restore,
    store_for,
    undo_notice,
)

GITIGNORE = "node_modules/\n*.log\nbuild/\n"
GIT_ENV = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(cwd: Path, *args: str) -> str:
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def bash(cwd: Path, script: str) -> None:
    subprocess.run(["bash", "-c", "set -e\n" + script], cwd=cwd, check=True)


def files_in(root: Path, *, ignored: bool = True) -> dict[bytes, tuple]:
    """Every file and symlink under root except .git: content or link target, and the permission bits."""
    state = {}
    top = os.fsencode(root)
    for directory, dirs, names in os.walk(top):
        dirs[:] = [name for name in dirs if name != b".git" and not os.path.islink(os.path.join(directory, name))]
        links = [name for name in os.listdir(directory) if os.path.islink(os.path.join(directory, name))]
        for name in set(names) | set(links):
            full = os.path.join(directory, name)
            relative = os.path.relpath(full, top)
            if not ignored and is_ignored_log(relative):
                continue
            if os.path.islink(full):
                state[relative] = ("link", os.readlink(full))
            else:
                state[relative] = ("file", Path(os.fsdecode(full)).read_bytes(), oct(os.lstat(full).st_mode & 0o777))
    return state


def is_ignored_log(path: bytes) -> bool:
    """Under the "*.log" rule of the random-operations test, also files inside a directory named *.log."""
    return any(part.endswith(b".log") for part in path.split(b"/"))


def git_dir_bytes(dot_git: Path) -> dict[str, bytes]:
    return {str(path.relative_to(dot_git)): path.read_bytes() for path in dot_git.rglob("*") if path.is_file()}


def make_project(root: Path, with_git: bool) -> Path:
    root.mkdir(parents=True)
    (root / ".gitignore").write_text(GITIGNORE)
    (root / "a.py").write_text("print('a')\n")
    (root / "run.sh").write_text("echo run\n")
    (root / "docs").mkdir()
    (root / "docs" / "old.md").write_text("# old\n")
    (root / "keep.txt").write_text("keep\n")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("module.exports = 1\n")
    (root / "server.log").write_text("started\n")
    if with_git:
        git(root, "init", "-q", "-b", "main")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        (root / "untracked.txt").write_text("not committed yet\n")
    return root


@pytest.fixture(params=["git", "plain"])
def project(request, tmp_path) -> Path:
    return make_project(tmp_path / "project", with_git=request.param == "git")


@pytest.fixture
def snapshots(project, tmp_path) -> Snapshots:
    return Snapshots(project, store_for(tmp_path / "data", project))


def test_undo_restores_file_writes_and_bash_changes(project, snapshots):
    before_state = files_in(project)
    stack = UndoStack(snapshots)
    stack.begin_turn()
    stack.before_change()
    (project / "a.py").write_text("print('changed')\n")  # as write_file/edit_file do
    bash(
        project,
        """
        echo new > new.txt
        rm docs/old.md
        mv keep.txt renamed.txt
        chmod +x run.sh
        mkdir -p pkg/sub && echo 'x = 1' > pkg/sub/mod.py
        ln -s a.py link.py
        echo more >> node_modules/pkg/index.js
        echo line >> server.log
        """,
    )
    checkpoint = stack.end_turn()
    assert sorted(snapshots.changes(checkpoint.before, checkpoint.after), key=lambda c: c.path) == [
        Change("a.py", "modified"),
        Change("docs/old.md", "deleted"),
        Change("keep.txt", "deleted"),
        Change("link.py", "added"),
        Change("new.txt", "added"),
        Change("pkg/sub/mod.py", "added"),
        Change("renamed.txt", "added"),
        Change("run.sh", "modified"),
    ]
    ignored_after_turn = {path: files_in(project)[path] for path in (b"node_modules/pkg/index.js", b"server.log")}

    report = stack.undo()

    assert report.problem == ""
    assert report.result.conflicts == () and report.result.failed == ()
    assert files_in(project) == {**before_state, **ignored_after_turn}
    assert not (project / "pkg").exists()  # the directory the turn created went with its file
    assert (project / "docs").is_dir()


def test_snapshot_leaves_the_projects_git_byte_identical(tmp_path):
    project = make_project(tmp_path / "project", with_git=True)
    (project / "a.py").write_text("print('stashed')\n")
    git(project, "stash", "-q")
    git(project, "branch", "feature")
    (project / "a.py").write_text("print('staged')\n")
    git(project, "add", "a.py")
    (project / ".git" / "hooks" / "post-commit").write_text("#!/bin/sh\ntouch HOOK_RAN\n")
    (project / ".git" / "hooks" / "post-commit").chmod(0o755)
    git(project, "status")  # let git refresh its own index before the reference copy
    reference = git_dir_bytes(project / ".git")
    snapshots = Snapshots(project, tmp_path / "store.git")

    before = snapshots.take()
    bash(project, "echo changed > a.py; echo new > b.py; rm keep.txt")
    after = snapshots.take()
    result = restore(snapshots, before, after)

    assert result.failed == () and result.conflicts == ()
    assert git_dir_bytes(project / ".git") == reference
    assert not (project / "HOOK_RAN").exists()
    assert (project / "a.py").read_text() == "print('staged')\n"


def test_ignored_and_excluded_files_are_not_in_the_snapshot(tmp_path):
    project = make_project(tmp_path / "project", with_git=True)
    (project / ".git" / "info" / "exclude").write_text("secret-notes.txt\n")
    (project / "secret-notes.txt").write_text("mine\n")
    snapshots = Snapshots(project, tmp_path / "store.git")
    commit = snapshots.take()
    listed = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "store.git"), "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert sorted(listed) == [".gitignore", "a.py", "docs/old.md", "keep.txt", "run.sh", "untracked.txt"]


def test_a_file_changed_after_the_turn_is_a_conflict_left_alone(project, snapshots):
    before = snapshots.take()
    bash(project, "echo turn > a.py; echo turn > keep.txt; echo turn > added.txt")
    after = snapshots.take()
    bash(project, "echo user > keep.txt; echo user > added.txt")  # the user's own edits after the turn

    result = restore(snapshots, before, after)

    assert result.conflicts == ("added.txt", "keep.txt")
    assert [change.path for change in result.undone] == ["a.py"]
    assert (project / "keep.txt").read_text() == "user\n"
    assert (project / "added.txt").read_text() == "user\n"
    assert (project / "a.py").read_text() == "print('a')\n"

    forced = restore(snapshots, before, after, force=True)

    assert forced.conflicts == ()
    assert (project / "keep.txt").read_text() == "keep\n"
    assert not (project / "added.txt").exists()


def test_two_turns_are_undone_one_after_the_other(project, snapshots):
    stack = UndoStack(snapshots)
    for text in ("one", "two"):
        stack.begin_turn()
        stack.before_change()
        bash(project, f"echo {text} > a.py; echo {text} > {text}.txt")
        stack.end_turn()

    first = stack.undo()
    assert (project / "a.py").read_text() == "one\n"
    assert not (project / "two.txt").exists() and (project / "one.txt").exists()
    assert first.remaining == 1

    second = stack.undo()
    assert (project / "a.py").read_text() == "print('a')\n"
    assert not (project / "one.txt").exists()
    assert second.remaining == 0
    # Not "no turn changed files": two did, and both are undone.
    assert stack.undo() == UndoReport(problem="Nothing to undo: every turn that changed files is undone (2 turns).")
    assert UndoStack(snapshots).undo() == UndoReport(problem="Nothing to undo: no turn of this session changed files.")


def test_a_snapshot_prepared_while_the_model_thinks_is_never_a_turns_before(project, tmp_path):
    """prepare() fills the store early (during the first request); an edit the user makes after it, before the
    turn's first change, is theirs: undoing the turn keeps it."""
    store = tmp_path / "prepared.git"
    stack = UndoStack(Snapshots(project, store))
    stack.prepare()
    assert store.exists() and stack.checkpoints == ()
    (project / "a.py").write_text("print('the user, meanwhile')\n")
    stack.begin_turn()
    stack.before_change()
    bash(project, "echo turn > a.py; echo turn > new.txt")
    stack.end_turn()
    stack.undo()
    assert (project / "a.py").read_text() == "print('the user, meanwhile')\n"
    assert not (project / "new.txt").exists()


def test_a_before_snapshot_waits_for_a_prepare_in_flight_and_never_snapshots_beside_it(project, tmp_path):
    """prepare() runs on the preload's thread while the first tool calls go on; the turn's first change waits for
    it, then finds the tree it snapshotted unchanged (the same commit, no new one)."""
    stack = UndoStack(Snapshots(project, tmp_path / "store.git"))
    take, inside, events = stack.snapshots.take, threading.Lock(), []
    prepare_inside, prepare_may_end = threading.Event(), threading.Event()

    def take_alone():
        assert inside.acquire(blocking=False), "two snapshots at once"
        try:
            events.append("take")
            if len(events) == 1:
                prepare_inside.set()
                prepare_may_end.wait(PATIENCE)
            return take()
        finally:
            inside.release()

    stack.snapshots.take = take_alone
    preparing = threading.Thread(target=stack.prepare)
    preparing.start()
    assert prepare_inside.wait(PATIENCE), "the prepare is taking its snapshot"
    stack.begin_turn()
    changing = threading.Thread(target=stack.before_change)
    changing.start()
    changing.join(0.1)
    assert changing.is_alive() and events == ["take"], "the before-snapshot waits"
    prepare_may_end.set()
    preparing.join(PATIENCE)
    changing.join(PATIENCE)
    assert events == ["take", "take"]
    bash(project, "echo turn > a.py")
    checkpoint = stack.end_turn()
    assert checkpoint is not None and [
        c.path for c in stack.snapshots.changes(checkpoint.before, checkpoint.after)
    ] == ["a.py"]


def test_a_turn_without_write_tools_takes_no_snapshot(project, tmp_path):
    store = tmp_path / "lazy.git"
    stack = UndoStack(Snapshots(project, store))
    stack.begin_turn()
    assert stack.end_turn() is None
    assert not store.exists()
    stack.begin_turn()
    stack.before_change()
    assert stack.end_turn() is None  # a write tool ran but changed nothing: nothing to undo
    assert stack.checkpoints == ()


def test_a_snapshot_of_an_unchanged_tree_is_the_last_one_and_every_kind_of_change_makes_a_new_one(project, snapshots):
    """Nothing changed since the last snapshot: that snapshot is this one (no new commit, three git runs fewer in
    the turn's gap), and a turn that changed nothing compares equal without git. Each kind of change still counts:
    content, a new file, a chmod alone, an ignored file (what a snapshot leaves out is part of its record)."""
    first = snapshots.take()
    ran: list[str] = []
    run = snapshots.git.run
    snapshots.git.run = lambda *args, **kwargs: ran.append(args[0]) or run(*args, **kwargs)
    assert first is not None and snapshots.take() == first
    assert snapshots.changes(first, first) == []
    assert ran == [], "no tree written, no commit made, no diff"
    taken = [first]
    for change in ("echo x >> a.py", "echo new > new.txt", "chmod 600 run.sh", "echo more >> server.log"):
        bash(project, change)
        commit = snapshots.take()
        assert commit is not None and commit not in taken, change
        assert snapshots.take() == commit, change
        taken.append(commit)
    assert [c.path for c in snapshots.changes(first, taken[2])] == ["a.py", "new.txt"]
    assert snapshots.mode_changes(taken[2], taken[3]) == [(b"run.sh", 0o644, 0o600)]


def test_a_failing_snapshot_does_not_raise_and_makes_the_turn_unrecorded(tmp_path):
    snapshots = Snapshots(tmp_path / "missing", tmp_path / "store.git")
    assert snapshots.take() is None
    assert "is not a directory" in snapshots.problem
    stack = UndoStack(snapshots)
    stack.begin_turn()
    stack.before_change()
    assert stack.end_turn() is None
    assert stack.checkpoints == (Unrecorded(f"no snapshot before its changes ({snapshots.problem})"),)
    report = stack.undo()
    assert report.result is None and report.problem.startswith("The last turn that ran tools cannot be undone")

    (tmp_path / "blocker").write_text("a file where the store's parent should be")
    assert Snapshots(tmp_path, tmp_path / "blocker" / "store.git").take() is None


def test_a_tree_too_big_to_snapshot_turns_snapshots_off_for_the_session(project, tmp_path):
    snapshots = Snapshots(project, tmp_path / "store.git", max_new_files=3)
    assert snapshots.take() is None
    assert snapshots.problem.startswith(f"too many files to snapshot in {project}")
    assert snapshots.problem.endswith("snapshots are off for this session")
    (project / "a.py").write_text("changed\n")
    assert snapshots.take() is None  # refused at once, without listing the tree again


def test_names_with_spaces_unicode_and_raw_bytes(tmp_path):
    project = tmp_path / "my project ü"
    (project / "dir with space").mkdir(parents=True)
    (project / "dir with space" / "naïve file.txt").write_text("before\n")
    (project / "日本語.md").write_text("前\n")
    (project / "tab\tand\nnewline").write_text("odd\n")
    raw_name = os.path.join(os.fsencode(project), b"latin1-\xe9.bin")
    with open(raw_name, "wb") as out:
        out.write(b"bytes")
    before_state = files_in(project)
    snapshots = Snapshots(project, tmp_path / "store.git")

    before = snapshots.take()
    bash(project, "echo after > 'dir with space/naïve file.txt'; rm 日本語.md; echo x > $'tab\\tand\\nnewline'")
    with open(raw_name, "wb") as out:
        out.write(b"changed")
    (project / "new dir ö").mkdir()
    (project / "new dir ö" / "ü.txt").write_text("new\n")
    after = snapshots.take()
    result = restore(snapshots, before, after)

    assert len(result.undone) == 5 and result.failed == ()
    assert files_in(project) == before_state
    assert not (project / "new dir ö").exists()


def test_crlf_and_text_attributes_come_back_byte_for_byte(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / ".gitattributes").write_text("* text=auto eol=lf\n*.txt filter=nonexistent\n")
    (project / "windows.txt").write_bytes(b"line one\r\nline two\r\n")
    (project / "mixed.bat").write_bytes(b"@echo off\r\nrem\n")
    snapshots = Snapshots(project, tmp_path / "store.git")
    before = snapshots.take()
    bash(project, "printf 'x\\n' > windows.txt; printf 'y\\n' > mixed.bat")
    restore(snapshots, before, snapshots.take())
    assert (project / "windows.txt").read_bytes() == b"line one\r\nline two\r\n"
    assert (project / "mixed.bat").read_bytes() == b"@echo off\r\nrem\n"


def test_user_git_config_and_environment_do_not_leak_in(tmp_path, monkeypatch):
    project = make_project(tmp_path / "project", with_git=True)
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text("[core]\n\tautocrlf = true\n\tfileMode = false\n\texcludesFile = ~/ignore-all\n")
    (home / "ignore-all").write_text("*\n")
    (home / ".config" / "git" / "ignore").write_text("*\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_DIR", str(project / ".git"))  # as if the agent ran inside a git hook
    monkeypatch.setenv("GIT_INDEX_FILE", str(project / ".git" / "index"))
    reference = git_dir_bytes(project / ".git")
    snapshots = Snapshots(project, tmp_path / "store.git")

    before = snapshots.take()
    bash(project, "printf 'a\\r\\nb\\r\\n' > a.py; chmod +x a.py")
    after = snapshots.take()

    assert snapshots.changes(before, after) == [Change("a.py", "modified")]
    bash(project, "printf 'c\\r\\n' > a.py")
    restore(snapshots, after, snapshots.take())
    assert (project / "a.py").read_bytes() == b"a\r\nb\r\n" and os.access(project / "a.py", os.X_OK)
    assert git_dir_bytes(project / ".git") == reference


def test_large_files_are_left_out_and_reported(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "small.txt").write_text("small\n")
    (project / "data.bin").write_bytes(b"x" * 5000)
    snapshots = Snapshots(project, tmp_path / "store.git", max_file_bytes=4096)
    before = snapshots.take()
    assert [skip.path for skip in snapshots.skipped] == ["data.bin"]
    assert snapshots.skipped[0].why == "larger than 0.00390625 MB"
    bash(project, "head -c 6000 /dev/zero > data.bin; echo changed > small.txt; head -c 9000 /dev/zero > grown.txt")
    after = snapshots.take()

    assert snapshots.changes(before, after) == [Change("small.txt", "modified")]
    result = restore(snapshots, before, after)
    assert [skip.path for skip in result.not_covered] == ["data.bin", "grown.txt"]
    assert (project / "data.bin").read_bytes() == b"\0" * 6000  # left as the turn made it
    assert (project / "small.txt").read_text() == "small\n"
    assert "data.bin, grown.txt" in undo_notice(UndoReport(result))


def test_a_file_that_grows_past_the_limit_is_left_out_not_deleted(tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "log.txt").write_text("short\n")
    snapshots = Snapshots(project, tmp_path / "store.git", max_file_bytes=100)
    before = snapshots.take()
    (project / "log.txt").write_bytes(b"y" * 500)
    after = snapshots.take()
    assert snapshots.changes(before, after) == []
    result = restore(snapshots, before, after)
    assert result.undone == () and [skip.path for skip in result.not_covered] == ["log.txt"]
    assert (project / "log.txt").read_bytes() == b"y" * 500


def test_nested_repositories_are_left_alone(project, snapshots):
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "code.py").write_text("v1\n")
    before = snapshots.take()
    assert [skip.path for skip in snapshots.skipped if skip.why != IGNORED] == ["vendor/lib/"]
    (nested / "code.py").write_text("v2\n")
    (project / "a.py").write_text("changed\n")
    restore(snapshots, before, snapshots.take())
    assert (nested / "code.py").read_text() == "v2\n"
    assert (project / "a.py").read_text() == "print('a')\n"


def test_no_write_through_a_directory_that_became_a_symlink(tmp_path):
    project = tmp_path / "p"
    outside = tmp_path / "outside"
    (project / "d").mkdir(parents=True)
    (project / "d" / "old.txt").write_text("old\n")
    outside.mkdir()
    snapshots = Snapshots(project, tmp_path / "store.git")
    before = snapshots.take()
    (project / "d" / "old.txt").unlink()
    after = snapshots.take()
    (project / "d").rmdir()
    (project / "d").symlink_to(outside)  # restoring d/old.txt now would write into `outside`

    result = restore(snapshots, before, after)

    assert result.failed == (("d/old.txt", "a directory on its path is now a symlink"),)
    assert list(outside.iterdir()) == []


def test_a_file_replaced_by_a_directory_and_back(tmp_path):
    project = tmp_path / "p"
    (project / "d").mkdir(parents=True)
    (project / "d" / "inner.txt").write_text("inner\n")
    (project / "f").write_text("file\n")
    (project / "g").write_text("becomes an empty directory\n")
    before_state = files_in(project)
    snapshots = Snapshots(project, tmp_path / "store.git")
    before = snapshots.take()
    bash(project, "rm f && mkdir f && echo x > f/child; rm -r d && echo flat > d; rm g && mkdir g")
    restore(snapshots, before, snapshots.take())
    assert files_in(project) == before_state


def test_undo_notice_names_what_happened():
    report = UndoReport(
        RestoreResult(
            undone=(Change("a.py", "modified"), Change("new.txt", "added"), Change("old.md", "deleted")),
            conflicts=("b.py",),
            failed=(("c.py", "Permission denied"),),
            not_covered=(Skipped("big.bin", "larger than 50 MB"),),
        )
    )
    assert undo_notice(report) == (
        "The user undid the file changes of your last turn that changed files (/undo): restored the earlier "
        "content of a.py; deleted the new files new.txt; recreated the deleted files old.md.\n"
        "Left as they are, because the user changed them after your turn: b.py.\n"
        "Could not be restored: c.py (Permission denied).\n"
        "Not covered by the undo (ignored, too large or nested repositories), so possibly still as you left them: "
        "big.bin.\n"
        "Do not redo those changes unless the user asks again; read files again before editing them."
    )
    assert undo_notice(UndoReport(problem="Nothing to undo")) == ""


def test_project_root_and_store_location(tmp_path):
    project = make_project(tmp_path / "project", with_git=True)
    (project / "docs" / "deep").mkdir()
    assert project_root(project / "docs" / "deep") == project
    assert project_root(tmp_path) == tmp_path
    store = store_for(tmp_path / "data", project)
    assert store.parent == tmp_path / "data" / "snapshots" and store.name.startswith("project-")
    assert store_for(tmp_path / "data", project / ".") == store


def test_checkpoints_rebuild_the_stack_in_a_new_session(project, tmp_path):
    store = tmp_path / "store.git"
    stack = UndoStack(Snapshots(project, store))
    stack.begin_turn()
    stack.before_change()
    (project / "a.py").write_text("turn\n")
    logged = stack.end_turn()
    assert isinstance(logged, Checkpoint)

    resumed = UndoStack(Snapshots(project, store), [Checkpoint(logged.before, logged.after)])
    assert resumed.undo().result.undone == (Change("a.py", "modified"),)
    assert (project / "a.py").read_text() == "print('a')\n"


def test_permission_bits_come_back_not_just_the_executable_bit(project, snapshots):
    (project / "secret.txt").write_text("private\n")
    (project / "secret.txt").chmod(0o600)
    (project / "notes.txt").write_text("notes\n")
    (project / "notes.txt").chmod(0o640)
    (project / "tool.sh").write_text("echo\n")
    (project / "tool.sh").chmod(0o700)
    stack = UndoStack(snapshots)
    stack.begin_turn()
    stack.before_change()  # within the second the files were made: git alone would not see the chmods
    bash(
        project,
        """
        chmod 644 secret.txt
        echo rewritten > tmp && chmod 666 tmp && mv tmp notes.txt
        chmod 755 tool.sh
        """,
    )
    checkpoint = stack.end_turn()
    assert checkpoint is not None
    (project / "keep.txt").chmod(0o600)  # the user's own change after the turn: not the turn's to undo

    report = stack.undo()

    assert report.result.conflicts == () and report.result.failed == ()
    assert {change.path: change.kind for change in report.result.undone} == {
        "secret.txt": "permissions",
        "notes.txt": "modified",
        "tool.sh": "permissions",
    }
    assert oct((project / "secret.txt").stat().st_mode & 0o777) == oct(0o600)
    assert oct((project / "notes.txt").stat().st_mode & 0o777) == oct(0o640)
    assert (project / "notes.txt").read_text() == "notes\n"
    assert oct((project / "tool.sh").stat().st_mode & 0o777) == oct(0o700)
    assert oct((project / "keep.txt").stat().st_mode & 0o777) == oct(0o600)
    assert "restored the permissions of secret.txt, tool.sh" in undo_notice(report)


def test_a_chmod_the_user_made_after_the_turn_is_a_conflict(project, snapshots):
    (project / "secret.txt").write_text("private\n")
    (project / "secret.txt").chmod(0o600)
    before = snapshots.take()
    (project / "secret.txt").chmod(0o644)
    after = snapshots.take()
    (project / "secret.txt").chmod(0o640)
    result = restore(snapshots, before, after)
    assert result.conflicts == ("secret.txt",)
    assert oct((project / "secret.txt").stat().st_mode & 0o777) == oct(0o640)


def test_ignored_files_a_turn_changed_are_reported_not_restored(project, snapshots):
    stack = UndoStack(snapshots)
    stack.begin_turn()
    stack.before_change()
    bash(project, "echo more >> server.log; mkdir build && echo out > build/out.bin; echo x > a.py")
    stack.end_turn()

    result = stack.undo().result

    assert result.undone == (Change("a.py", "modified"),)
    assert {(skip.path, skip.why) for skip in result.not_covered} == {("server.log", IGNORED), ("build/", IGNORED)}
    assert (project / "server.log").read_text() == "started\nmore\n"  # left as the turn made it
    assert "build/, server.log" in undo_notice(UndoReport(result)) or "server.log, build/" in undo_notice(
        UndoReport(result)
    )


def test_several_turns_are_undone_at_once_newest_first(project, snapshots):
    stack = UndoStack(snapshots)
    for content in ("one\n", "two\n", "three\n"):
        stack.begin_turn()
        stack.before_change()
        (project / "a.py").write_text(content)
        (project / f"{content.strip()}.txt").write_text(content)
        stack.end_turn()

    report = stack.undo(2)

    assert report.turns == 2 and report.remaining == 1
    assert (project / "a.py").read_text() == "one\n"
    assert (project / "one.txt").exists() and not (project / "two.txt").exists()
    assert not (project / "three.txt").exists()
    assert {change.path: change.kind for change in report.result.undone} == {
        "a.py": "modified",
        "two.txt": "added",
        "three.txt": "added",
    }
    assert "your last 2 turns" in undo_notice(report)
    assert stack.rewind(0).turns == 1
    assert (project / "a.py").read_text() == "print('a')\n" and not (project / "one.txt").exists()
    assert stack.undo().problem.startswith("Nothing to undo")


# Random file operations on a small set of paths; *.log files are ignored and must survive untouched.
PATHS = ["a", "a/inner", "b.txt", "d/c.txt", "d/e", "d/e/f.sh", "sp ace/ü.txt", "x.log", "d/y.log"]
MODES = [0o600, 0o640, 0o644, 0o664, 0o700, 0o750, 0o755, 0o400]
CONTENTS = st.sampled_from([b"", b"one\n", b"two\n", b"one\r\n", b"\x00\xff binary", b"three lines\n" * 3])
OPERATIONS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(PATHS), CONTENTS),
    st.tuples(st.just("delete"), st.sampled_from(PATHS)),
    st.tuples(st.just("chmod"), st.sampled_from(PATHS), st.sampled_from(MODES)),
    st.tuples(st.just("symlink"), st.sampled_from(PATHS), st.sampled_from(["b.txt", "d", "nowhere"])),
    st.tuples(st.just("rename"), st.sampled_from(PATHS), st.sampled_from(PATHS)),
)


def apply(root: Path, operation: tuple) -> None:
    kind, path = operation[0], root / operation[1]
    try:
        if kind in ("write", "symlink"):
            for parent in reversed(path.relative_to(root).parents[:-1]):
                if (root / parent).is_symlink() or (root / parent).is_file():
                    (root / parent).unlink()
            clear(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "write":
                path.write_bytes(operation[2])
            else:
                path.symlink_to(operation[2])
        elif kind == "delete":
            clear(path)
        elif kind == "chmod" and path.is_file() and not path.is_symlink():
            path.chmod(operation[2])
        elif kind == "rename":
            os.rename(path, root / operation[2])
    except OSError:
        pass  # e.g. renaming onto a non-empty directory: the operation just does not happen


def clear(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    initial=st.lists(
        st.one_of(
            st.tuples(st.just("write"), st.sampled_from(PATHS), CONTENTS),
            st.tuples(st.just("chmod"), st.sampled_from(PATHS), st.sampled_from(MODES)),
        ),
        max_size=8,
    ),
    turn=st.lists(OPERATIONS, min_size=1, max_size=10),
    with_git=st.booleans(),
)
def test_restore_gives_back_the_exact_tree_after_random_operations(initial, turn, with_git):
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "project"
        root.mkdir()
        (root / ".gitignore").write_text("*.log\n")
        (root / ".gitattributes").write_text("* text=auto\n")
        for operation in initial:
            apply(root, operation)
        if with_git:
            git(root, "init", "-q")
        snapshots = Snapshots(root, Path(temp) / "store.git")
        before_state = files_in(root, ignored=False)
        before = snapshots.take()
        for operation in turn:
            apply(root, operation)
        ignored_now = {path: value for path, value in files_in(root).items() if is_ignored_log(path)}
        after = snapshots.take()

        result = restore(snapshots, before, after)

        assert result.conflicts == () and result.failed == ()
        assert files_in(root, ignored=False) == before_state
        assert {path: value for path, value in files_in(root).items() if is_ignored_log(path)} == ignored_now
