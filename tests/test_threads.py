"""Background threads leave the process's signals to the main thread, and their children take signals as usual."""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from support import PATIENCE

from mini_agent import threads
from mini_agent.processes.tree import Lineage
from mini_agent.processes.watchdog import Watchdog

PACKAGE = Path(threads.__file__).parent


def blocked_in(status: str, field: str = "SigBlk") -> set[int]:
    """The signals a /proc status text marks in `field` (SigBlk, ShdPnd)."""
    line = next(line for line in status.splitlines() if line.startswith(f"{field}:"))
    bits = int(line.split()[1], 16)
    return {number for number in range(1, 65) if bits & (1 << (number - 1))}


def mask_in(run) -> set[int]:
    """The signal mask of the thread that `run` starts, as that thread sees it."""
    seen: list[set[int]] = []
    done = threading.Event()

    def look() -> None:
        seen.append({int(number) for number in signal.pthread_sigmask(signal.SIG_BLOCK, ())})
        done.set()

    run(look)
    done.wait()
    return seen[0]


def test_a_thread_of_ours_blocks_the_main_threads_signals_and_the_main_thread_keeps_them():
    before = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    assert set(threads.MAIN_ONLY) <= mask_in(lambda look: threads.start(look, name="test"))
    assert set(threads.MAIN_ONLY) <= mask_in(lambda look: threads.new(look, name="test").start())
    assert signal.pthread_sigmask(signal.SIG_BLOCK, ()) == before
    with ThreadPoolExecutor(1, initializer=threads.leave_to_main) as pool:
        assert set(threads.MAIN_ONLY) <= mask_in(pool.submit)
    threads.leave_to_main()  # on the main thread: nothing
    assert signal.pthread_sigmask(signal.SIG_BLOCK, ()) == before


def test_the_mcp_loops_thread_takes_signals_even_when_a_thread_of_ours_starts_it():
    seen: list[set[int]] = []
    done = threading.Event()

    def start_the_loop() -> None:
        def look() -> None:
            seen.append({int(number) for number in signal.pthread_sigmask(signal.SIG_BLOCK, ())})
            done.set()

        threads.start(look, name="test-loop", takes_signals=True)

    threads.start(start_the_loop, name="test")
    done.wait()
    assert not seen[0] & set(threads.MAIN_ONLY)


SCENARIO = """
import os, signal, subprocess, sys, threading
from pathlib import Path
from mini_agent import threads

sent, done = threading.Event(), threading.Event()

def spawn_and_spawn():
    sent.wait()
    for _ in range(3):
        subprocess.run(["true"], check=True)
    for _ in range(200):
        signal.pthread_sigmask(signal.SIG_BLOCK, ())
    done.set()

threads.start(spawn_and_spawn, name="spawner")
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
os.kill(os.getpid(), signal.SIGINT)
sent.set()
done.wait()
line = next(l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("ShdPnd:"))
print("pending" if int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)) else "taken", flush=True)
try:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    for _ in range(10):  # the handler runs between two bytecodes
        pass
except KeyboardInterrupt:
    print("interrupted")
"""


def test_a_ctrl_c_that_the_main_thread_cannot_take_now_waits_for_it_while_a_thread_of_ours_spawns():
    """The failure this prevents: a thread changing its signal mask (every subprocess spawn does, twice) while a
    SIGINT is pending takes it, and the main thread, blocked in a read, never hears of it. Here the main thread
    holds SIGINT off for a moment, so the kernel must look for another taker. (In a fresh interpreter: the test
    runner has threads of its own, which are anyone's takers.)"""
    done = subprocess.run([sys.executable, "-c", SCENARIO], capture_output=True, text=True, timeout=PATIENCE)
    assert done.stdout.split() == ["pending", "interrupted"], done.stderr


def child_mask(run_child) -> set[int]:
    """The mask a child started by `run_child()` on a thread of ours has: its /proc status's SigBlk line."""
    out: list[str] = []
    done = threading.Event()

    def run() -> None:
        try:
            out.append(run_child())
        finally:
            done.set()

    threads.start(run, name="test-parent")
    done.wait()
    return blocked_in(out[0])


def test_a_command_or_job_started_on_a_thread_of_ours_takes_every_signal(tmp_path):
    """(A batch's commands run on the pool's threads, background jobs on the spawner's. `bash` keeps the mask it
    was started with, and hands it to everything it runs; dash, a hook's /bin/sh here, clears it.)"""

    def command() -> str:
        lineage = Lineage()
        process = lineage.spawn(["cat", "/proc/self/status"], stdout=subprocess.PIPE, cwd=tmp_path)
        output = process.communicate()[0].decode()
        lineage.close()
        return output

    assert not child_mask(command) & set(threads.MAIN_ONLY)


def test_the_watchdog_started_on_a_thread_of_ours_still_ends_on_sigterm():
    """The bash watchdog's helper is started by the preload thread; it ignores the terminal's signals on purpose,
    but a SIGTERM (a shutdown) must end it."""
    dog = Watchdog()
    started = threading.Event()
    threads.start(lambda: (dog.start(), started.set()), name="test-preload")
    started.wait()
    helper = dog._helper
    assert helper is not None
    try:
        helper.send_signal(signal.SIGTERM)
        assert helper.wait(timeout=PATIENCE) == -signal.SIGTERM
    finally:
        helper.kill()
        dog._close()


def test_the_main_thread_starts_commands_on_the_fast_path():
    assert threads.child_preexec() is None  # no preexec_fn: subprocess keeps vfork


def bare_threads(source: str) -> list[str]:
    """Calls that start a thread without `threads`: a bare `threading.Thread`, a pool without the initializer."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name.endswith("threading.Thread") or name == "Thread":
                found.append(f"{node.lineno} {name}")
            if name.endswith("ThreadPoolExecutor") and "initializer" not in {k.arg for k in node.keywords}:
                found.append(f"{node.lineno} {name} without initializer")
    return found


def test_every_thread_of_the_package_is_started_through_threads():
    """A bare thread would take the main thread's signals whenever it starts a process."""
    offenders = {
        str(path.relative_to(PACKAGE)): found
        for path in PACKAGE.rglob("*.py")
        if path.name != "threads.py" and (found := bare_threads(path.read_text()))
    }
    assert offenders == {}


def test_the_thread_check_sees_a_bare_thread_and_a_bare_pool():
    source = "import threading\nthreading.Thread(target=print).start()\nThreadPoolExecutor(4)\n"
    assert sorted(bare_threads(source)) == ["2 threading.Thread", "3 ThreadPoolExecutor without initializer"]
    assert bare_threads("ThreadPoolExecutor(4, initializer=threads.leave_to_main)\n") == []
