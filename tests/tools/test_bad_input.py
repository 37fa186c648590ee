"""Arguments no file system or exec call can take: one clear is_error result, nothing touched, the turn goes on."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from support import PATIENCE
from support.fake_api import answer, tool_use

from mini_agent.agent import Agent
from mini_agent.conversation import Session
from mini_agent.model import AnthropicProvider
from mini_agent.safety.permissions import Allow
from mini_agent.safety.preview import change_preview
from mini_agent.tools import default_tools
from mini_agent.tools.base import ToolContext

BAD_PATHS = {
    "a NUL byte": ("notes\0.txt", "contains a NUL byte (\\x00) at character 6"),
    "a lone surrogate": ("notes\ud800.txt", "unpaired surrogate ('\\ud800' at character 6)"),
    "a low surrogate (surrogateescape)": ("\udcff.txt", "unpaired surrogate ('\\udcff' at character 1)"),
    "too long for the OS": ("d/" * 2100 + "f", "is 4,201 bytes long; the system limits a path to 4,095 bytes"),
    "a name too long": ("x" * 300 + ".txt", "has a name of 304 bytes"),
    "nothing": ("", "is empty"),
    "a NUL after ~": ("~\0", "contains a NUL byte"),
}
FILE_CALLS = {
    "read_file": {},
    "write_file": {"content": "hello\n"},
    "edit_file": {"old_string": "a", "new_string": "b"},
}


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


@pytest.mark.parametrize("tool", FILE_CALLS)
@pytest.mark.parametrize("case", BAD_PATHS)
def test_a_path_no_file_can_have_is_refused_by_name(ctx: ToolContext, tmp_path: Path, tool: str, case: str) -> None:
    path, expected = BAD_PATHS[case]

    result = default_tools().call(tool, {"path": path, **FILE_CALLS[tool]}, ctx)

    assert result.is_error
    assert result.content.startswith(f"Invalid arguments for {tool}: 'path' "), result.content
    assert expected in result.content
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("echo a\0b", "'command' contains a NUL byte (\\x00) at character 7"),
        ("cd 'sub\0dir' && ls", "'command' contains a NUL byte (\\x00) at character 8"),
        ("echo \ud800 > f", "'command' contains an unpaired surrogate"),
    ],
)
def test_a_command_bash_cannot_receive_is_refused(ctx: ToolContext, tmp_path: Path, command: str, expected) -> None:
    result = default_tools().call("bash", {"command": command}, ctx)

    assert result.is_error and expected in result.content, result.content
    assert os.listdir(tmp_path) == []


def test_content_that_is_not_unicode_is_refused_before_the_file_is_touched(ctx: ToolContext, tmp_path: Path) -> None:
    result = default_tools().call("write_file", {"path": "a.txt", "content": "ok \udc80 no"}, ctx)

    assert result.is_error and "'content' contains an unpaired surrogate" in result.content
    assert os.listdir(tmp_path) == []


def test_a_nul_byte_in_a_url_is_an_error_result(ctx: ToolContext) -> None:
    result = default_tools().call("web_fetch", {"url": "http://exa\0mple.com/"}, ctx)

    assert result.is_error and "non-printable" in result.content


def test_a_path_that_resolves_too_long_is_the_os_error_not_a_crash(tmp_path: Path) -> None:
    deep = ToolContext(cwd=tmp_path / (("d" * 200 + "/") * 10))  # 2,000 bytes of cwd + a 3,000-byte relative path
    result = default_tools().call("read_file", {"path": "e" * 200 + "/" + "f/" * 1400}, deep)

    assert result.is_error and "File name too long" in result.content


def test_the_loop_answers_every_bad_call_and_the_turn_goes_on(api, settings_for) -> None:
    """In process: calls carrying text the streaming parser would not deliver (lone surrogates) reach the loop
    from a resumed session or a non-streamed reply; each gets its own error result, the good call still runs."""
    settings = settings_for(api)
    (settings.cwd / "good.txt").write_text("fine\n")
    agent = Agent(
        AnthropicProvider(settings),
        default_tools(),
        settings,
        Session(),
        ToolContext(cwd=settings.cwd),
        "test",
        lambda event: None,
        lambda request: Allow(),
    )
    calls = [
        tool_use("read_file", {"path": "a\0b"}, id="nul"),
        tool_use("edit_file", {"path": "a\ud800", "old_string": "x", "new_string": "y"}, id="surrogate"),
        tool_use("write_file", {"path": "d/" * 2100, "content": "x"}, id="long"),
        tool_use("bash", {"command": "cat 'a\0b'"}, id="command"),
        tool_use("read_file", {"path": "good.txt"}, id="good"),
    ]
    results = {block["tool_use_id"]: block for block in agent.tool_calls.run(calls)}

    errors = [results[id].get("is_error", False) for id in ("nul", "surrogate", "long", "command", "good")]
    assert errors == [True, True, True, True, False]
    assert "NUL byte" in results["nul"]["content"] and "surrogate" in results["surrogate"]["content"]
    assert "fine" in results["good"]["content"]


def test_nul_bytes_in_every_tool_end_to_end_leave_the_run_successful(run_cli, api, tmp_path: Path) -> None:
    api.script(
        answer(
            tool_use("read_file", {"path": "a\0b"}, id="r"),
            tool_use("write_file", {"path": "a\0b", "content": "x"}, id="w"),
            tool_use("edit_file", {"path": "~\0", "old_string": "x", "new_string": "y"}, id="e"),
            tool_use("bash", {"command": "echo a\0b"}, id="b"),
        ),
        answer("All four were refused; done."),
    )

    done = run_cli(["-p", "try bad paths"], api)  # default mode: the gate and the preview would see the paths

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr.decode()
    assert done.stdout.decode().strip() == "All four were refused; done."
    results = api.message_requests[1]["messages"][-1]["content"]
    assert [block.get("is_error") for block in results] == [True] * 4
    assert all("contains a NUL byte" in block["content"] for block in results)


def test_the_preview_of_a_write_to_a_fifo_does_not_block(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    shown: list[str | None] = []
    worker = threading.Thread(
        target=lambda: shown.append(change_preview({"path": "pipe", "content": "x"}, tmp_path)),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=PATIENCE)
    if worker.is_alive():  # unblock the reader so the thread ends
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert not worker.is_alive(), "the preview opened the fifo and waited for a writer"
    assert shown == [f"({fifo} is not a regular file; the call will fail)"]


def test_the_preview_of_a_huge_file_is_not_a_diff(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with open(big, "wb") as stream:
        stream.truncate(2 * 1024**3)  # sparse: 2 GB on paper, nothing on disk

    shown = change_preview({"path": "big.log", "old_string": "a", "new_string": "b"}, tmp_path)

    assert shown == f"({big} is 2,147,483,648 bytes, too big to show a diff)"
