"""The file tools open exactly what the permission policy checked: a path swapped for a symlink after the check is
refused, never followed (real files, a real swapping process, the real gate in auto mode)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mini_agent.files import exact as _exact
from mini_agent.files.exact import open_directory, open_exact, openat2, read_exact
from mini_agent.gate import Gate
from mini_agent.safety.permissions import Allow, Deny
from mini_agent.tools.base import ToolContext, ToolRegistry
from mini_agent.tools.read_file import read_file
from mini_agent.tools.write_file import write_file

SWAPS = 400
"""Calls made while the path is swapped back and forth; the victim is what the test asserts on, not timing."""

SWAPPER = r"""
import os, shutil, sys
path, regular, link_target, mode = sys.argv[1:5]
spare, link, trash = path + ".spare", path + ".link", path + ".trash"

def remove(name):
    if os.path.isdir(name) and not os.path.islink(name):
        shutil.rmtree(name, ignore_errors=True)
    elif os.path.lexists(name):
        os.unlink(name)

while True:
    try:
        if mode == "file":  # a regular file, then a symlink to the victim, each put in place in one rename
            with open(spare, "w") as out:
                out.write(regular)
            os.replace(spare, path)
            os.symlink(link_target, link)
            os.replace(link, path)
        else:  # a directory, then a symlink to the victim's directory (a directory cannot replace a link)
            os.mkdir(spare)
            if os.path.lexists(path):
                os.rename(path, trash)
                remove(trash)
            os.rename(spare, path)
            os.symlink(link_target, link)
            os.rename(path, trash)
            os.rename(link, path)
            remove(trash)
    except OSError:  # the tool made the directory meanwhile: start the round again
        for name in (spare, link, trash):
            remove(name)
"""


@pytest.fixture(params=["openat2", "walk"])
def opening(request, monkeypatch) -> str:
    """Both ways of opening without symlinks: openat2 where the kernel has it, one component at a time elsewhere."""
    if request.param == "walk":
        monkeypatch.setattr(_exact, "has_openat2", lambda: False)
    elif not _exact.has_openat2():
        pytest.skip("this kernel has no openat2")
    return request.param


def test_openat2_refuses_a_symlink_anywhere_on_the_path(tmp_path):
    if not _exact.has_openat2():
        pytest.skip("this kernel has no openat2")
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("x")
    (tmp_path / "dirlink").symlink_to(tmp_path / "real")
    (tmp_path / "filelink").symlink_to(tmp_path / "real" / "f")
    from mini_agent.files.exact import AT_FDCWD, RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS

    os.close(openat2(AT_FDCWD, tmp_path / "real" / "f", os.O_RDONLY, resolve=RESOLVE_NO_SYMLINKS))
    for path in (tmp_path / "dirlink" / "f", tmp_path / "filelink"):
        with pytest.raises(OSError) as raised:
            openat2(AT_FDCWD, path, os.O_RDONLY, resolve=RESOLVE_NO_SYMLINKS)
        assert raised.value.errno == errno.ELOOP
    root = os.open(tmp_path / "real", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.close(openat2(root, "f", os.O_RDONLY, resolve=RESOLVE_BENEATH))
        with pytest.raises(OSError) as raised:
            openat2(root, "../real/f", os.O_RDONLY, resolve=RESOLVE_BENEATH)
        assert raised.value.errno == errno.EXDEV
    finally:
        os.close(root)


def test_open_exact_opens_a_plain_path_and_refuses_a_link_on_it(opening, tmp_path):
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "f").write_text("content")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "real" / "sub" / "last").symlink_to(tmp_path / "real" / "sub" / "f")
    assert read_exact(tmp_path / "real" / "sub" / "f") == b"content"
    for swapped in (tmp_path / "link" / "sub" / "f", tmp_path / "real" / "sub" / "last"):
        with pytest.raises(OSError) as raised:
            os.close(open_exact(swapped, os.O_RDONLY))
        assert raised.value.errno in _exact.CHANGED
    made = open_directory(tmp_path / "real" / "new" / "deeper", create=True)
    os.close(made)
    assert (tmp_path / "real" / "new" / "deeper").is_dir()
    with pytest.raises(OSError) as raised:
        os.close(open_directory(tmp_path / "link" / "other", create=True))
    assert raised.value.errno in _exact.CHANGED
    assert not (tmp_path / "real" / "other").exists()  # nothing made through the link


def test_a_symlink_inside_the_project_still_works(opening, tmp_path):
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "real.txt").write_text("hello\n")
    (project / "alias.txt").symlink_to("src/real.txt")
    ctx = ToolContext(cwd=project)
    registry = ToolRegistry([read_file, write_file])
    assert "hello" in registry.call("read_file", {"path": "alias.txt"}, ctx).content
    written = registry.call("write_file", {"path": "alias.txt", "content": "bye\n"}, ctx)
    assert not written.is_error, written.content
    assert (project / "alias.txt").is_symlink() and (project / "src" / "real.txt").read_text() == "bye\n"


# --- the race, through the real gate ---------------------------------------------------------------------------


@pytest.fixture
def gated(api, settings_for, tmp_path, monkeypatch):
    """The gate in auto mode over a project, answering no to every question (a swap to outside must not pass)."""
    project, outside, scratch = tmp_path / "project", tmp_path / "outside", tmp_path / "scratch"
    for directory in (project, outside, scratch):
        directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the temp dir is writable in auto mode; outside is not
    ctx = ToolContext(cwd=project)
    registry = ToolRegistry([read_file, write_file])
    settings = settings_for(api, cwd=project, permission_mode="auto")
    gate = Gate(settings, ctx, lambda request: Deny("no"), registry.get)

    def call(name: str, arguments: dict):
        verdict = gate.authorise(registry.get(name), arguments)
        return registry.call(name, arguments, ctx) if isinstance(verdict, Allow) else None

    return project, outside, call


def swapping(path: Path, regular: str, link_target: Path, mode: str = "file") -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", SWAPPER, str(path), regular, str(link_target), mode])
    while not os.path.lexists(path):  # running: the path exists from its first swap on
        if process.poll() is not None:
            raise AssertionError("the swapper died")
    return process


def test_read_file_never_returns_what_a_swapped_in_symlink_points_to(opening, gated):
    project, outside, call = gated
    victim = outside / ".env"
    victim.write_text("TOKEN=victim-secret\n")
    swapper = swapping(project / "notes.txt", "plain notes\n", victim)
    try:
        results = [call("read_file", {"path": "notes.txt"}) for _ in range(SWAPS)]
        assert swapper.poll() is None, "the swapper stopped"
    finally:
        swapper.kill()
        swapper.wait()
    contents = [result.content for result in results if result is not None]
    assert any("plain notes" in content for content in contents)  # the race really ran
    assert not [content for content in contents if "victim-secret" in content]


def test_write_file_never_writes_through_a_swapped_in_symlink(opening, gated):
    project, outside, call = gated
    target = outside / "config"
    swapper = swapping(project / "out", "", outside, mode="dir")
    try:
        written = [call("write_file", {"path": f"out/new-{n}.txt", "content": "planted\n"}) for n in range(SWAPS)]
        assert swapper.poll() is None, "the swapper stopped"
    finally:
        swapper.kill()
        swapper.wait()
    assert [result for result in written if result is not None]  # some were allowed: the race really ran
    assert sorted(os.listdir(outside)) == [], "a write went through the symlink to outside the project"
    assert not target.exists()


def test_a_write_replaces_its_name_only_and_other_hard_links_keep_the_old_content(tmp_path):
    """The decided behaviour for hard links (the policy asks first): an atomic write gives the name a new file."""
    project, store = tmp_path / "project", tmp_path / "store"
    project.mkdir()
    store.mkdir()
    (store / "index.js").write_text("original\n")
    os.link(store / "index.js", project / "index.js")
    ctx = ToolContext(cwd=project)
    registry = ToolRegistry([read_file, write_file])
    assert not registry.call("read_file", {"path": "index.js"}, ctx).is_error
    assert not registry.call("write_file", {"path": "index.js", "content": "changed\n"}, ctx).is_error
    assert (project / "index.js").read_text() == "changed\n" and (project / "index.js").stat().st_nlink == 1
    assert (store / "index.js").read_text() == "original\n"
