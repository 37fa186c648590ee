"""Each confined command's private directory (its TMPDIR, bubblewrap's placeholders) is handed to the next command
only as it was made (scratch.py): a command that empties nothing, swaps a placeholder for a link to a key, or
changes a mode gets its directory removed, and the next command is no less confined. Real sandbox, real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mini_agent.processes.run import BoundedOutput, run_launched
from mini_agent.safety.sandbox import Confinement, confine, mechanism, unavailable_reason


@pytest.fixture
def bubblewrap(monkeypatch) -> None:
    monkeypatch.setenv("MINI_AGENT_SANDBOX", "bubblewrap")
    if mechanism() is None:
        pytest.skip(f"bubblewrap is not available here: {unavailable_reason()}")


@pytest.fixture
def layout(tmp_path) -> dict[str, Path]:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / ".netrc").write_text("machine example.com password hunter2\n")
    return {"project": project, "home": home}


def run(script: str, layout, level="workspace-write") -> str:
    """Confined with /tmp writable, as the agent's commands are: the private directories live there."""
    conf = Confinement(level, layout["project"], home=layout["home"])
    launch = confine(["sh", "-c", script], {"PATH": os.environ["PATH"]}, conf.root, conf)
    output = BoundedOutput(50_000, 50_000)
    try:
        run_launched(launch, conf.root, 60, output)
    finally:
        launch.cleanup()
    return output.head + output.tail


def test_every_command_starts_with_an_empty_tmpdir(forced, layout):
    for _ in range(3):
        text = run('ls -A "$TMPDIR"; echo left > "$TMPDIR/file"; mkdir "$TMPDIR/dir"; echo done', layout)
        assert text.split() == ["done"]


SWAPS = {
    "the directory placeholder for a link to ~/.ssh": (
        'p="$b/hidden-dir"; chmod 700 "$p"; rmdir "$p"; ln -s {home}/.ssh "$p"'
    ),
    "the file placeholder for a link to ~/.netrc": 'p="$b/hidden-file"; rm -f "$p"; ln -s {home}/.netrc "$p"',
    "both placeholders made readable": 'chmod 755 "$b/hidden-dir"; chmod 644 "$b/hidden-file"',
    "the directory renamed away and another put in its place": (
        'mv "$b" "$b.old" && mkdir -p "$b/tmp" && ln -s {home}/.ssh "$b/hidden-dir" && ln -s {home}/.netrc '
        '"$b/hidden-file"'
    ),
}


@pytest.mark.parametrize("swap", SWAPS.values(), ids=SWAPS.keys())
def test_a_command_that_tampers_with_its_private_directory_does_not_weaken_the_next(bubblewrap, layout, swap):
    """bubblewrap mounts the placeholders over hidden paths; a command at workspace-write can write in /tmp, where
    they are. Were its directory handed on as it left it, the next command's "cover" would be the key itself."""
    home = layout["home"]
    tamper = 'b=$(dirname "$TMPDIR"); ' + swap.format(home=home) + "; echo tampered"
    assert "tampered" in run(tamper, layout)
    for level in ("workspace-write", "read-only"):
        text = run(f"cat {home}/.ssh/id_rsa {home}/.netrc 2>&1; echo done", layout, level)
        assert "PRIVATE KEY" not in text and "hunter2" not in text and "done" in text


def test_the_private_directories_are_gone_when_the_process_exits(layout, tmp_path):
    """One directory per process holds them; the process removes it on its way out."""
    temp = tmp_path / "temp"
    temp.mkdir()
    code = (
        "import os, sys; from pathlib import Path; "
        "from mini_agent.safety.sandbox import Confinement, confine; "
        "root = Path(sys.argv[1]); "
        "launches = [confine(['true'], {}, root, Confinement('workspace-write', root)) for _ in range(3)]; "
        "launches[0].cleanup(); print(sorted(os.listdir(sys.argv[2])))"
    )
    env = {**os.environ, "TMPDIR": str(temp)}
    if mechanism() is None:
        pytest.skip(f"no sandbox here: {unavailable_reason()}")
    shown = subprocess.run(
        [sys.executable, "-c", code, str(layout["project"]), str(temp)], env=env, capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert "mini-agent-sandbox-" in shown.stdout  # made while it ran (two launches never cleaned up, on purpose)
    assert os.listdir(temp) == []


def test_bubblewrap_binds_the_private_tmpdir_only_where_it_is_not_writable_already(tmp_path):
    """Each mount costs bubblewrap ~0.2 ms: the TMPDIR inside a writable /tmp needs no bind of its own."""
    from mini_agent.safety.sandbox.bubblewrap import command
    from mini_agent.safety.sandbox.confinement import Plan

    tmpdir = Path("/tmp/mini-agent-sandbox-x/command-y/tmp")
    binds = lambda argv: [argv[i + 1] for i, arg in enumerate(argv) if arg == "--bind"]  # noqa: E731
    shared = Plan("workspace-write", False, tmp_path, tmpdir, (tmp_path, Path("/tmp"), tmpdir), (), ())
    assert binds(command("bwrap", shared, tmp_path, ["true"], (tmp_path, tmp_path))) == [str(tmp_path), "/tmp"]
    alone = Plan("read-only", False, tmp_path, tmpdir, (tmpdir,), (), ())
    assert binds(command("bwrap", alone, tmp_path, ["true"], (tmp_path, tmp_path))) == [str(tmpdir)]
