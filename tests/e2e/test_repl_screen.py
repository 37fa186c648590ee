"""What the REPL's screen looks like on a real terminal (a pseudo-terminal read by the pyte emulator): never two
blank lines in a row, where a question or `Interrupted.` follows the echoed request. The spacing rule itself:
tests/ui/test_spacing.py."""

from __future__ import annotations

import dataclasses

import pyte
from support import eventually
from support.fake_api import answer, tool_use
from support.repl import finish, spawn


class Screen:
    def __init__(self, child) -> None:
        self.child = child
        self.screen = pyte.Screen(120, 40)
        self.stream = pyte.Stream(self.screen)

    def expect(self, pattern: str) -> None:
        self.child.expect(pattern)
        self.stream.feed(self.child.before + self.child.after)

    def rows(self) -> list[str]:
        shown = [row.rstrip() for row in self.screen.display]
        while shown and not shown[-1]:
            shown.pop()
        return shown


def doubled_blank_lines(rows: list[str]) -> list[int]:
    return [index for index in range(1, len(rows)) if not rows[index] and not rows[index - 1]]


def test_a_question_and_interrupted_right_after_the_request_have_one_blank_line_above(api, tmp_path):
    slow = dataclasses.replace(answer("Too late."), event_delay=5)  # waiting for the model when Ctrl-C comes
    api.script(answer(tool_use("write_file", {"path": "a.txt", "content": "hi\n"})), answer("Written."), slow)
    child = spawn(api, tmp_path)
    screen = Screen(child)
    screen.expect("›")
    child.sendline("write a file")
    screen.expect(r"Allow\? \[")
    rows = screen.rows()
    asked = next(index for index, row in enumerate(rows) if "needs your approval" in row)
    assert rows[asked - 2 : asked] == ["› write a file", ""]
    child.send("y")
    screen.expect("Written.")
    screen.expect("›")
    child.sendline("and wait")
    screen.expect("waiting for the model")
    eventually(lambda: len(api.message_requests) == 3, "the request leaving")
    child.sendcontrol("c")
    screen.expect("Interrupted.")
    screen.expect("›")
    rows = screen.rows()
    stopped = rows.index("Interrupted.")
    assert rows[stopped - 2 : stopped] == ["› and wait", ""]
    assert doubled_blank_lines(rows) == [], "\n".join(rows)
    child.sendcontrol("d")
    assert finish(child) == 0
