"""The approval question's keys from a real terminal (a pseudo-terminal pair): keys, lines, and Ctrl-C."""

from __future__ import annotations

import os
import subprocess
import sys
import termios
import tty

from support import PATIENCE

from mini_agent.ui.keys import ENTER, TerminalKeys, key_or_enter


def test_keys_and_a_line_from_a_terminal():
    controller, terminal = os.openpty()
    try:
        keys = TerminalKeys(terminal)
        cooked = termios.tcgetattr(terminal)
        tty.setcbreak(terminal)  # as while `key` waits: a key pressed then is read as it is
        for typed, key in ((b"y", "y"), ("é".encode(), "é"), (b"\r", ENTER), (b"\x04", ENTER)):  # Ctrl-D: no
            os.write(controller, typed)
            assert key_or_enter(keys) == key
        termios.tcsetattr(terminal, termios.TCSANOW, cooked)
        os.write(controller, b"use the Makefilx\x7fe\n")  # the terminal's own editing: Backspace erases
        assert keys.line() == "use the Makefile"
    finally:
        os.close(controller)
        os.close(terminal)


STOLEN_CTRL_C = """
import os, signal, sys, threading
from pathlib import Path
from mini_agent.ui.keys import TerminalKeys

controller, terminal = os.openpty()
main = threading.get_native_id()
wrote = threading.Event()

def not_ours():
    # Once the main thread waits for the key, send the process a SIGINT: this thread takes it (the main thread
    # holds it off), as a library's thread that is busy starting a process can.
    while Path(f"/proc/self/task/{main}/stat").read_text().rsplit(")", 1)[1].split()[0] != "S":
        pass
    os.kill(os.getpid(), signal.SIGINT)
    if not ended.wait(float(sys.argv[1])):  # the old read would wait for ever: a key ends it
        wrote.set()
        os.write(controller, b"y")

ended = threading.Event()
taker = threading.Thread(target=not_ours, daemon=True)
taker.start()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
try:
    TerminalKeys(terminal).key()
    print("a key")
except KeyboardInterrupt:
    print("interrupted after a key" if wrote.is_set() else "interrupted")
ended.set()
"""


def test_a_ctrl_c_another_thread_took_still_ends_the_wait_for_a_key():
    done = subprocess.run(
        [sys.executable, "-c", STOLEN_CTRL_C, str(PATIENCE)], capture_output=True, text=True, timeout=2 * PATIENCE
    )
    assert done.stdout.strip() == "interrupted", done.stderr
