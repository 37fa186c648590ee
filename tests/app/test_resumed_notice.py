"""--continue's notice: printed once, after the session is read, above the prompt or before the first line."""

from __future__ import annotations

import asyncio
import threading

from mini_agent.app.resumed_notice import ResumedNotice


def test_the_notice_waits_for_the_session_and_is_printed_once():
    printed: list[str] = []
    notice = ResumedNotice(lambda: "Continuing session abc", printed.append)
    shower = threading.Thread(target=notice.show)
    shower.start()
    shower.join(0.05)
    assert shower.is_alive() and not printed, "nothing to print before the session is read"
    notice.read()
    shower.join()
    notice.show()
    assert printed == ["Continuing session abc"]


def test_a_new_session_prints_nothing():
    printed: list[str] = []
    notice = ResumedNotice(lambda: None, printed.append)
    notice.read()
    notice.show()
    assert printed == []


def test_a_prompt_that_has_ended_leaves_the_notice_to_the_first_line():
    """Read just as the prompt returned: its loop is closed, so the notice waits for `show`, and nothing raises."""

    class Ended:
        is_running, is_done = True, False
        loop = asyncio.new_event_loop()

    Ended.loop.close()
    printed: list[str] = []
    notice = ResumedNotice(lambda: "Continuing session abc", printed.append)
    notice.above(type("Session", (), {"app": Ended()})())
    notice.read()
    assert printed == []
    notice.show()
    assert printed == ["Continuing session abc"]


def test_without_waiting_nothing_is_printed_before_the_session_is_read():
    """Before each prompt the REPL prints a notice read meanwhile (a prompt left with Ctrl-C before it showed)."""
    printed: list[str] = []
    notice = ResumedNotice(lambda: "Continuing session abc", printed.append)
    notice.show(wait=False)
    assert printed == []
    notice.read()
    notice.show(wait=False)
    notice.show(wait=False)
    assert printed == ["Continuing session abc"]
