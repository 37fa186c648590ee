"""Git cannot be turned against the user: a sandboxed command cannot leave behind git files that make the user's
next `git status` or `git commit` run its programs, cannot swap the git dir for another, and cannot make the
history unrecoverable; the human is told what it tried. Real git, real bubblewrap and Landlock (each forced in
turn through MINI_AGENT_SANDBOX), the installed command against the loopback model for the end-to-end ones."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from support import BIN, PATIENCE
from support.fake_api import answer, tool_use
from support.trees import GIT, make_repo

from mini_agent.processes.run import BoundedOutput, run_launched
from mini_agent.safety.sandbox import Confinement, confine, describe, mechanism
from mini_agent.safety.shell import classify
from mini_agent.safety.workspace import Workspace

SYSTEM_GIT = shutil.which("git", path=os.defpath) or "git"
"""The system's git: a wrapper earlier on PATH (this project's shared test machine disables `git stash`) must not
decide what git does here."""
IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
# A repository's own helper script: the paths it writes are computed, so no reading of its text can tell.
PLANT_COMMONDIR = """\
import os, sys
victim = sys.argv[1]
target = os.path.join("build", "cfg")
os.makedirs(os.path.join(target, "hooks"), exist_ok=True)
with open(os.path.join(target, "config"), "w") as f:
    f.write("[core]\\n\\tfsmonitor = touch " + victim + "; false\\n")
os.makedirs(os.path.join(target, "refs"), exist_ok=True)
with open(os.path.join(".g" + "it", "common" + "dir"), "w") as f:
    f.write("../" + target + "\\n")
print("set up")
"""


@pytest.fixture
def world():
    """A user's repository and a directory outside it, not under /tmp (which workspace-write lets builds write)."""
    cache = Path.home() / ".cache" / "mini-agent-tests"
    cache.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="git-", dir=cache))
    try:
        outside = base / "outside"
        outside.mkdir()
        yield make_repo(base / "project"), outside
    finally:
        shutil.rmtree(base, ignore_errors=True)


def sandboxed(project: Path, script: str):
    """`sh -c script` in the workspace-write sandbox of `project`; its output and what it did to the git dir."""
    conf = Confinement("workspace-write", project, shared_temp_dirs=())
    env = {"PATH": f"{Path(SYSTEM_GIT).parent}:{os.environ['PATH']}", "HOME": str(project.parent), **IDENTITY}
    launch = confine(["sh", "-c", script], env, project, conf)
    output = BoundedOutput(20_000, 20_000)
    try:
        run_launched(launch, project, 60, output)
        changes = launch.git_changes()
    finally:
        launch.cleanup()
    return output.head + output.tail, changes


def users_git(project: Path, *args: str) -> subprocess.CompletedProcess:
    """git as the user runs it later in their own terminal: unconfined."""
    return subprocess.run([*GIT, *args], cwd=project, capture_output=True, text=True, timeout=PATIENCE)


# --- the sandbox ------------------------------------------------------------------------------------------------


def test_a_planted_commondir_is_put_back_and_the_users_git_status_runs_nothing(forced, world):
    project, outside = world
    (project / "setup_dev.py").write_text(PLANT_COMMONDIR)
    text, changes = sandboxed(project, f"{sys.executable} setup_dev.py {outside}/pwned")
    assert "set up" in text
    assert not (project / ".git" / "commondir").exists()
    assert ".git/commondir" in changes.put_back and "commondir" in changes.notice()
    assert (changes.quarantine / ".git" / "commondir").read_text() == "../build/cfg\n"
    users_git(project, "status")
    assert not (outside / "pwned").exists()


def test_the_git_dir_cannot_be_swapped_for_one_with_a_hook(forced, world):
    project, outside = world
    before = os.stat(project / ".git").st_ino
    hook = f"#!/bin/sh\ntouch {outside}/pwned\n"
    script = (
        "mv .git .g; mkdir -p .git; cp -r .g/. .git/; rm -rf .git/hooks; mkdir .git/hooks; "
        f"printf '{hook}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; echo done"
    )
    text, changes = sandboxed(project, script)
    assert "done" in text
    assert os.stat(project / ".git").st_ino == before
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    if forced == "bubblewrap":  # pinned: the rename itself fails
        assert "Device or resource busy" in text
    else:  # Landlock cannot stop the rename: the original is moved back, the replacement set aside
        assert "moved back" in changes.notice()
    (project / "new.txt").write_text("x\n")
    users_git(project, "add", "new.txt")
    assert users_git(project, "commit", "-qm", "two").returncode == 0
    assert not (outside / "pwned").exists()


def test_history_a_script_deletes_comes_back(forced, world):
    project, _ = world
    users_git(project, "branch", "keep-me")
    head = users_git(project, "rev-parse", "HEAD").stdout.strip()
    text, changes = sandboxed(project, "rm -rf .git/objects .git/refs .git/logs .git/packed-refs; echo gone")
    assert "gone" in text
    assert "put back" in changes.notice()
    assert users_git(project, "rev-parse", "HEAD").stdout.strip() == head
    assert users_git(project, "rev-parse", "keep-me").stdout.strip() == head
    assert users_git(project, "fsck", "--no-dangling").returncode == 0
    assert "one" in users_git(project, "log", "--format=%s").stdout


def test_ordinary_git_work_runs_and_is_not_reported(forced, world):
    project, _ = world
    script = (
        "git checkout -q -b feature && echo more >> README.md && git add README.md && git commit -qm two && "
        "echo wip > src/app.py && git stash -q && git stash list && git stash pop -q && git commit -qam three && "
        "git checkout -q - && git merge -q --no-edit feature && echo ok"
    )
    text, changes = sandboxed(project, script)
    assert text.rstrip().endswith("ok"), text
    assert not changes, changes.notice()
    assert users_git(project, "log", "-1", "--format=%s").stdout.strip() == "three"


def test_a_deleted_branch_is_reported_with_its_commit(forced, world):
    project, _ = world
    users_git(project, "branch", "old")
    head = users_git(project, "rev-parse", "HEAD").stdout.strip()
    _, changes = sandboxed(project, "git branch -q -D old")
    assert changes.deleted_refs == [("refs/heads/old", head)]
    assert f"refs/heads/old (was {head[:12]})" in changes.notice()


# --- the classifier: the config git will really read -------------------------------------------------------------


def _kind(command: str, root: Path) -> str:
    return classify(command, Workspace.at(root)).kind


def _evil_config(directory: Path, victim: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config").write_text(f"[core]\n\tfsmonitor = touch {victim}\n")
    return directory / "config"


def test_git_status_is_not_read_only_where_commondir_leads_to_a_program(world):
    project, outside = world
    assert _kind("git status", project) == "read-only"
    _evil_config(outside / "cfg", outside / "pwned")
    (project / ".git" / "commondir").write_text(f"{outside}/cfg\n")
    assert _kind("git status", project) != "read-only"
    assert _kind("git status", project / "src") != "read-only"


@pytest.mark.parametrize("how", ["include", "includeIf", "worktree-config"])
def test_git_status_reads_included_and_worktree_config(world, how):
    project, outside = world
    config = _evil_config(outside / "cfg", outside / "pwned")
    if how == "worktree-config":
        shutil.copy(config, project / ".git" / "config.worktree")
    else:
        section = "[include]" if how == "include" else '[includeIf "gitdir:/"]'
        with open(project / ".git" / "config", "a") as file:
            file.write(f"{section}\n\tpath = {config}\n")
    assert _kind("git log", project) != "read-only"


def test_git_c_and_git_dir_options_lead_the_classifier_where_git_goes(world):
    project, outside = world
    subprocess.run(["git", "init", "-q", "--bare", str(outside / "bare")], check=True)
    _evil_config(outside / "bare", outside / "pwned")
    assert _kind(f"git -C {outside}/bare status", project) != "read-only"
    assert _kind(f"git --git-dir={outside}/bare log", project) != "read-only"
    assert _kind("git -C src status", project) == "read-only"


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf .g*/objects",
        "rm -rf .[g]it/refs",
        "git -c gc.pruneExpire=now gc",
        "git gc --prune=1.second.ago",
        "git repack -a -d",
        "git tag -d v1",
        "git branch -M feature master",
    ],
)
def test_commands_that_destroy_history_are_destructive(world, command):
    assert _kind(command, world[0]) == "destructive"


@pytest.mark.parametrize(
    "command", ["git add .", "git commit -m x", "git checkout -b y", "git stash", "git gc", "git branch -m a b"]
)
def test_ordinary_git_work_stays_ordinary(world, command):
    assert _kind(command, world[0]) == "ordinary"


# --- end to end: the agent, the human's notice, the next session --------------------------------------------------

needs_sandbox = pytest.mark.skipif(mechanism() is None, reason="no OS sandbox on this machine")


@needs_sandbox
def test_in_auto_mode_a_repository_script_cannot_plant_commondir_and_the_human_is_told(run_cli, api, world):
    project, outside = world
    (project / "setup_dev.py").write_text(PLANT_COMMONDIR)  # the repository's own, there before the session
    api.script(
        answer(tool_use("bash", {"command": f"python3 setup_dev.py {outside}/pwned"}, id="c1")),
        answer("Done."),
    )
    done = run_cli(["-p", "set up the dev environment", "--permission-mode", "auto"], api, cwd=project)
    assert done.returncode == 0, done.stderr
    stderr = done.stderr.decode()
    assert "! A sandboxed command changed git control files" in stderr and ".git/commondir" in stderr
    block = api.message_requests[1]["messages"][-1]["content"][0]
    assert "put back" in block["content"]  # the model hears it too
    assert not (project / ".git" / "commondir").exists()
    users_git(project, "status")
    assert not (outside / "pwned").exists()


@needs_sandbox
@pytest.mark.parametrize("mode", ["default", "plan"])
def test_the_agents_own_git_status_asks_where_commondir_leads_to_a_program(run_cli, api, world, mode):
    """A commondir planted some other way (an unpacked archive): the next session's "read-only" git status."""
    project, outside = world
    _evil_config(outside / "cfg", outside / "pwned")
    (project / ".git" / "commondir").write_text(f"{outside}/cfg\n")
    api.script(answer(tool_use("bash", {"command": "git status --short"}, id="c1")), answer("Done."))
    done = run_cli(["-p", "what changed?", "--permission-mode", mode], api, cwd=project)
    assert done.returncode in (0, 4), done.stderr
    block = api.message_requests[1]["messages"][-1]["content"][0]
    assert block.get("is_error") and "not run" in block["content"].lower(), block["content"]
    assert not (outside / "pwned").exists()


@needs_sandbox
@pytest.mark.parametrize("command", ["rm -rf .g*/objects", "git -c gc.pruneExpire=now gc", "git tag -d v1"])
def test_deleting_history_asks_even_in_auto(run_cli, api, world, command):
    project, _ = world
    users_git(project, "tag", "v1")
    objects = sorted(str(path) for path in (project / ".git" / "objects").rglob("*"))
    api.script(answer(tool_use("bash", {"command": command}, id="c1")), answer("Done."))
    done = run_cli(["-p", "tidy up", "--permission-mode", "auto"], api, cwd=project)
    assert done.returncode in (0, 4), done.stderr
    block = api.message_requests[1]["messages"][-1]["content"][0]
    assert block.get("is_error") and "not run" in block["content"].lower(), block["content"]
    assert sorted(str(path) for path in (project / ".git" / "objects").rglob("*")) == objects
    assert users_git(project, "rev-parse", "v1").returncode == 0


# --- what `mini-agent sandbox` says -------------------------------------------------------------------------------


def test_mini_agent_sandbox_reports_the_git_protection(forced, world):
    project, _ = world
    record = describe(project)
    text = " ".join(record["git"])
    assert "commondir" in text and "put back" in text and "mini-agent-keep" in text
    assert ("pinned" in text) == (forced == "bubblewrap")


@needs_sandbox
def test_sandbox_run_puts_back_what_it_planted_and_says_so(world):
    project, _ = world
    done = subprocess.run(
        [str(BIN), "sandbox", "run", "--level", "workspace-write", "--", "sh", "-c", "echo ../x > .git/commondir"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=PATIENCE,
    )
    assert "put back" in done.stdout + done.stderr
    assert not (project / ".git" / "commondir").exists()


def test_an_object_directory_changed_just_now_is_listed_again_at_the_next_command(world):
    """The keep skips an object directory whose ctime is what it was at the last look. Where timestamps are
    coarse, an object written in the same tick as that look would keep the ctime as it was and never be kept; so
    a directory changed within the timestamps' granularity is not taken as looked at (this machine's timestamps
    are fine-grained once looked at, so the lost object itself cannot be made here)."""
    from mini_agent.safety import gitrepo
    from mini_agent.safety.sandbox import gitkeep

    project, _ = world
    common = gitrepo.git_dirs(project.resolve())[-1]
    assert gitkeep.sync(common)
    recent = [path for path, stamp in gitkeep._synced.items() if path.is_relative_to(common) and stamp == -1]
    assert common / "objects" / "pack" in recent or any(path.parent == common / "objects" for path in recent)
