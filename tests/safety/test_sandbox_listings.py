"""The sandbox remembers which credential places, `.env*` files and service sockets exist (listings.py) and must
never go stale: whatever appears between two confined commands is hidden from (or covered for) the second one,
with real files, real links, a real Unix socket and the real sandbox. Most tests move the clock `listings`
compares ctimes with, so that every directory looks settled and answers are remembered from the first command on;
they then wait for the filesystem's clock to tick before changing anything (what a settled directory means)."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mini_agent.processes.run import BoundedOutput, run_launched
from mini_agent.safety.sandbox import Confinement, confine, listings, mechanism, unavailable_reason

HOUR_NS = 3600 * 10**9


@pytest.fixture
def settled(monkeypatch):
    """Every directory looks as if it had last changed long ago: answers are remembered at once."""
    _settle(monkeypatch)


def _settle(monkeypatch) -> None:
    monkeypatch.setattr(listings, "_now", lambda: time.time_ns() + HOUR_NS)


@pytest.fixture
def layout():
    """A project, a fake home and a directory outside both, not under /tmp: every confined command makes its
    private temp dir in /tmp, which would change a directory on the way and so renew every remembered answer."""
    base = Path(tempfile.mkdtemp(prefix="mini-agent-listings-", dir="/var/tmp"))
    project, home, outside = base / "project", base / "home", base / "outside"
    project.mkdir()
    (home / ".config" / "editor").mkdir(parents=True)
    (home / ".ssh").mkdir()
    outside.mkdir()
    try:
        yield {"project": project, "home": home, "outside": outside, "tmp": base}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def tick(scratch: Path) -> None:
    """Wait until the filesystem's clock has moved on from every timestamp already given (an event: the coarse
    clock's next tick), so that a change from now on gives its directory a new ctime."""
    scratch.touch()
    first = os.stat(scratch).st_ctime_ns
    while os.stat(scratch).st_ctime_ns == first:
        os.utime(scratch)


def run(script: str, layout, level="workspace-write") -> str:
    conf = Confinement(level, layout["project"], home=layout["home"], shared_temp_dirs=())
    launch = confine(["sh", "-c", script], {"PATH": os.environ["PATH"]}, conf.root, conf)
    output = BoundedOutput(50_000, 50_000)
    try:
        run_launched(launch, conf.root, 60, output)
    finally:
        launch.cleanup()
    return output.head + output.tail


CREDENTIALS = {
    "a new folder of a tool's credentials": ".config/gh/hosts.yml",
    "a new login file in home": ".pgpass",
    "a new file in a place that exists": ".ssh/id_ed25519",
    "a history file": ".python_history",
}


@pytest.mark.parametrize("level", ["workspace-write", "read-only"])
@pytest.mark.parametrize("name", CREDENTIALS.values(), ids=CREDENTIALS.keys())
@pytest.mark.parametrize("wait", [True, False], ids=["settled", "same-tick"])
def test_a_credential_created_between_two_commands_is_hidden_from_the_second(
    forced, layout, monkeypatch, name, level, wait
):
    """`settled`: answers remembered, the credential made a tick later; `same-tick`: the real clock, the
    credential made at once (it may share a tick with the look before: that answer must not have been kept)."""
    if wait:
        _settle(monkeypatch)
    target = layout["home"] / name
    script = f"cat {target} 2>&1; echo done"
    assert "done" in run(script, layout, level) and "SECRET" not in run(script, layout, level)
    if wait:
        tick(layout["outside"] / "clock")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("SECRET token\n")
    text = run(script, layout, level)
    assert "SECRET" not in text and "done" in text


@pytest.mark.parametrize("wait", [True, False], ids=["settled", "same-tick"])
def test_an_env_file_created_beside_the_project_between_two_commands_is_hidden(forced, layout, monkeypatch, wait):
    if wait:
        _settle(monkeypatch)
    env_file = layout["tmp"] / ".env.local"
    script = f"cat {env_file} 2>&1; echo done"
    assert "done" in run(script, layout)
    if wait:
        tick(layout["outside"] / "clock")
    env_file.write_text("DB_PASSWORD=SECRET\n")
    assert "SECRET" not in run(script, layout)
    env_file.unlink()  # gone again: the next command runs, and a new one is hidden once more
    if wait:
        tick(layout["outside"] / "clock")
    (layout["tmp"] / ".env").write_text("SECRET=2\n")
    text = run(f"cat {layout['tmp']}/.env 2>&1; echo done", layout)
    assert "SECRET" not in text and "done" in text


def test_a_credential_reached_through_a_link_is_hidden_where_the_link_leads_now(forced, layout, settled):
    """~/.aws -> outside/current -> keys-a; then `current` is pointed at keys-b, which holds a key. No directory
    on the way to ~/.aws changed, so the remembered answer stands, but where it leads is resolved again."""
    outside = layout["outside"]
    (outside / "keys-a").mkdir()
    (outside / "keys-b").mkdir()
    (outside / "keys-b" / "credentials").write_text("SECRET aws key\n")
    (outside / "current").symlink_to(outside / "keys-a")
    (layout["home"] / ".aws").symlink_to(outside / "current")
    script = f"cat {layout['home']}/.aws/credentials 2>&1; cat {outside}/keys-b/credentials 2>&1; echo done"
    assert "done" in run(f"ls {layout['home']}/.aws; echo done", layout)
    tick(outside / "clock")
    (outside / "current").unlink()
    (outside / "current").symlink_to(outside / "keys-b")
    text = run(script, layout)
    assert "SECRET" not in text and "done" in text


def test_a_service_socket_created_between_two_commands_is_covered(monkeypatch, layout, settled):
    """bubblewrap covers the user's service sockets (services.py): docker's, made after the first command."""
    monkeypatch.setenv("MINI_AGENT_SANDBOX", "bubblewrap")
    if mechanism() is None:
        pytest.skip(f"bubblewrap is not available here: {unavailable_reason()}")
    run_dir = layout["home"] / ".docker" / "run"
    if len(str(run_dir / "docker.sock")) > 100:
        pytest.skip("the temporary directory's path is too long for a Unix socket")
    script = f"ls -A {run_dir} 2>&1; echo done"
    assert "docker.sock" not in run(script, layout)
    tick(layout["outside"] / "clock")
    run_dir.mkdir(parents=True)
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(run_dir / "docker.sock"))
        server.listen(1)
        text = run(script, layout)
    finally:
        server.close()
    assert "docker.sock" not in text and "done" in text


# --- the rule beneath: remembered answers equal fresh ones, whatever changes -------------------------------------

NAMES = ("a", "b", ".env", ".env.x")
OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(["file", "dir", "remove", "link", "rename", "chmod"]),
        st.sampled_from(["", "d", "d/e"]),
        st.sampled_from(NAMES),
        st.sampled_from(NAMES),
    ),
    min_size=1,
    max_size=8,
)


def _apply(base: Path, operation: tuple[str, str, str, str]) -> None:
    kind, folder, name, other = operation
    path = base / folder / name if folder else base / name
    try:
        if kind == "file":
            path.write_text("x")
        elif kind == "dir":
            path.mkdir()
        elif kind == "remove":
            path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
        elif kind == "link":
            path.symlink_to(base / other)
        elif kind == "rename":
            os.rename(path, path.parent / other)
        else:
            os.chmod(path.parent, 0o700 if os.stat(path.parent).st_mode & 0o077 else 0o755)
    except OSError:
        pass


def _fresh(paths: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(os.path.realpath(path) for path in paths if os.path.lexists(path))


def _env(name: str) -> bool:
    return name.startswith(".env")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS, wait=st.booleans())
def test_remembered_answers_equal_fresh_ones_after_any_change(operations, wait, monkeypatch):
    """After each change (a file, a folder, a link, a rename, a removal, a permission change, anywhere on the
    way), `existing` and `names` answer as a fresh look does: with every directory settled and a tick between,
    and with the real clock and no wait at all (changes in the tick of the look)."""
    if wait:
        _settle(monkeypatch)
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "tree"
        (base / "d" / "e").mkdir(parents=True)
        paths = tuple(str(base / folder / name) for folder in ("", "d", "d/e", "a", "a/e") for name in NAMES)
        folders = [str(base / folder) for folder in ("", "d", "d/e", "a")]
        for operation in [None, *operations]:
            if operation is not None:
                if wait:
                    tick(Path(scratch) / "clock")
                _apply(base, operation)
            assert listings.existing(paths) == _fresh(paths)
            for folder in folders:
                try:
                    fresh = tuple(name for name in os.listdir(folder) if _env(name))
                except OSError:
                    fresh = ()
                assert sorted(listings.names(folder, _env)) == sorted(fresh)


def test_an_answer_resting_on_a_directory_changed_just_now_is_not_remembered(tmp_path, monkeypatch):
    """Where timestamps are coarse (a 1-2 s filesystem, a kernel without fine-grained ones: this machine's are
    fine-grained once looked at, so the case cannot be made here for real), a file made in the same tick as the
    look would leave its directory's state as it was. So nothing that rests on a directory changed less than
    SETTLED_NS ago is kept: the next call looks again."""
    (tmp_path / "home").mkdir()
    paths = (str(tmp_path / "home" / ".netrc"),)
    assert listings.existing(paths) == ()
    assert listings.names(str(tmp_path / "home"), _env) == ()
    assert paths not in listings._existing
    assert not [key for key in listings._names if key[0] == str(tmp_path / "home")]
    _settle(monkeypatch)  # the same directories, an hour later
    assert listings.existing(paths) == ()
    assert listings.names(str(tmp_path / "home"), _env) == ()
    assert paths in listings._existing
    assert [key for key in listings._names if key[0] == str(tmp_path / "home")]
