"""Validate before asking: a call that cannot succeed goes back to the model as the error running it would give,
and nobody is asked to approve it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from support.fake_api import answer, tool_use
from support.repl import finish, spawn

from mini_agent.gate import doomed
from mini_agent.tools import default_tools
from mini_agent.tools.base import ToolContext, execute

TOOLS = {tool.name: tool for tool in default_tools()}


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under root with its bytes (None for a directory): what a precheck must leave alone."""
    return {str(path.relative_to(root)): (path.read_bytes() if path.is_file() else None) for path in root.rglob("*")}


def read(ctx: ToolContext, name: str) -> None:
    assert not execute(TOOLS["read_file"], {"path": name, "offset": 1, "limit": 2000}, ctx).is_error


def setup_unread(ctx):
    (ctx.cwd / "a.txt").write_text("one\n")


def setup_changed(ctx):
    setup_unread(ctx)
    read(ctx, "a.txt")
    (ctx.cwd / "a.txt").write_text("two\n")


def setup_read(ctx):
    (ctx.cwd / "a.txt").write_text("one\ntwo\none\n")
    read(ctx, "a.txt")


def setup_blocker(ctx):
    (ctx.cwd / "blocker").write_text("a file where a folder should be\n")


DOOMED = [
    ("edit of a file never read", setup_unread, "edit_file", {"path": "a.txt", "old_string": "one", "new_string": "1"}),
    (
        "edit of a file changed since",
        setup_changed,
        "edit_file",
        {"path": "a.txt", "old_string": "two", "new_string": "2"},
    ),
    ("old_string not found", setup_read, "edit_file", {"path": "a.txt", "old_string": "three", "new_string": "3"}),
    ("old_string not unique", setup_read, "edit_file", {"path": "a.txt", "old_string": "one", "new_string": "1"}),
    ("identical strings", setup_read, "edit_file", {"path": "a.txt", "old_string": "two", "new_string": "two"}),
    ("edit of a missing path", setup_read, "edit_file", {"path": "b.txt", "old_string": "x", "new_string": "y"}),
    ("creating over a non-empty file", setup_read, "edit_file", {"path": "a.txt", "old_string": "", "new_string": "x"}),
    (
        "create under a file",
        setup_blocker,
        "edit_file",
        {"path": "blocker/new.txt", "old_string": "", "new_string": "x"},
    ),
    ("overwrite of a file never read", setup_unread, "write_file", {"path": "a.txt", "content": "x"}),
    ("write under a file", setup_blocker, "write_file", {"path": "blocker/deep/new.txt", "content": "x"}),
    ("write over a directory", lambda ctx: (ctx.cwd / "d").mkdir(), "write_file", {"path": "d", "content": "x"}),
    ("read of a directory", lambda ctx: (ctx.cwd / "d").mkdir(), "read_file", {"path": "d"}),
    ("empty command", setup_unread, "bash", {"command": "   "}),
    ("a URL without a scheme", setup_unread, "web_fetch", {"url": "localhost:8000/x"}),
    ("a file: URL", setup_unread, "web_fetch", {"url": "file:///etc/passwd"}),
]


@pytest.mark.parametrize(("case", "prepare", "name", "arguments"), DOOMED, ids=[case[0] for case in DOOMED])
def test_a_doomed_call_is_refused_with_the_error_running_it_gives_and_nothing_changes(
    tmp_path, case, prepare, name, arguments
):
    ctx = ToolContext(cwd=tmp_path)
    prepare(ctx)
    tool = TOOLS[name]
    validated = tool.validate(arguments)
    before = tree(tmp_path)
    refusal = doomed(tool, validated, ctx)
    assert tree(tmp_path) == before  # the check wrote nothing, created no folder
    ran = execute(tool, validated, ctx)
    assert ran.is_error and refusal == ran.content


FINE = [
    ("edit of a read file", setup_read, "edit_file", {"path": "a.txt", "old_string": "two", "new_string": "2"}),
    (
        "replace_all",
        setup_read,
        "edit_file",
        {"path": "a.txt", "old_string": "one", "new_string": "1", "replace_all": True},
    ),
    ("create a new file", setup_read, "edit_file", {"path": "new/b.txt", "old_string": "", "new_string": "x"}),
    ("write a new file", setup_read, "write_file", {"path": "deep/er/b.txt", "content": "x"}),
    ("overwrite a read file", setup_read, "write_file", {"path": "a.txt", "content": "x"}),
    ("a command", setup_read, "bash", {"command": "true"}),
]


@pytest.mark.parametrize(("case", "prepare", "name", "arguments"), FINE, ids=[case[0] for case in FINE])
def test_a_call_that_can_succeed_passes_the_check_and_then_succeeds(tmp_path, case, prepare, name, arguments):
    ctx = ToolContext(cwd=tmp_path)
    prepare(ctx)
    tool = TOOLS[name]
    validated = tool.validate(arguments)
    before = tree(tmp_path)
    assert doomed(tool, validated, ctx) is None
    assert tree(tmp_path) == before
    assert not execute(tool, validated, ctx).is_error


def test_in_a_terminal_a_doomed_edit_is_never_put_to_the_human(api, tmp_path):
    (tmp_path / "notes.txt").write_text("one\n")
    api.script(
        answer(tool_use("edit_file", {"path": "notes.txt", "old_string": "one", "new_string": "two"})),
        answer(tool_use("read_file", {"path": "notes.txt"})),
        answer(tool_use("edit_file", {"path": "notes.txt", "old_string": "three", "new_string": "four"})),
        answer(tool_use("edit_file", {"path": "notes.txt", "old_string": "one", "new_string": "two"})),
        answer("Edited."),
    )
    child = spawn(api, tmp_path, "-p", "edit the notes")
    child.logfile_read = screen = io.StringIO()
    child.expect(r"edit_file\(notes.txt\) needs your approval")
    child.expect(r"Allow\? \[y/n/e\]")
    child.send("y")  # one key, no Enter
    child.expect("Edited.")
    assert finish(child) == 0
    assert (tmp_path / "notes.txt").read_text() == "two\n"
    assert screen.getvalue().count("needs your approval") == 1  # only the edit that can succeed was put
    assert len(api.message_requests) == 5
    unread = api.message_requests[1]["messages"][-1]["content"][0]
    assert unread["is_error"] and "has not been read in this session" in unread["content"]
    missing = api.message_requests[3]["messages"][-1]["content"][0]
    assert missing["is_error"] and "old_string was not found in the file" in missing["content"]
