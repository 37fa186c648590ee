"""A server started by a run loads once that run has ended or is quiet, never beside it while it is busy."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from support import PATIENCE

from mini_agent.serve.quiet import cpu_seconds, wait_for_quiet


def sleeper() -> subprocess.Popen:
    """An idle process that lives until the test kills it (a run waiting for the model, as the server sees it)."""
    return subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])


def test_a_quiet_run_is_not_waited_for_past_the_grace():
    run = sleeper()
    try:
        wait_for_quiet(run.pid, grace=0.0, limit=PATIENCE, sample=0.01)  # its real CPU time: idle, so at once
        assert run.poll() is None
    finally:
        run.kill()
        run.wait()


def test_a_busy_run_is_waited_for_until_it_ends():
    run, samples, readings = sleeper(), threading.Event(), []

    def busy(pid: int) -> float:  # a full core between any two readings
        readings.append(pid)
        if len(readings) == 5:
            samples.set()
        return float(len(readings))

    waiter = threading.Thread(target=wait_for_quiet, args=(run.pid, 0.0, PATIENCE, 0.01, busy))
    try:
        waiter.start()
        assert samples.wait(PATIENCE)  # five readings of a busy run, and still waiting
        assert waiter.is_alive()
    finally:
        run.kill()
        run.wait()
    waiter.join(PATIENCE)
    assert not waiter.is_alive()  # the run ended: the server loads


def test_a_busy_run_is_waited_for_at_most_the_limit():
    run, readings = sleeper(), []
    try:
        busy = lambda pid: readings.append(pid) or len(readings)  # noqa: E731  (a full core between readings)
        wait_for_quiet(run.pid, grace=0.0, limit=0.05, sample=0.01, cpu=busy)
        assert run.poll() is None and len(readings) > 1  # busy at every reading, still going: loads all the same
    finally:
        run.kill()
        run.wait()


def test_a_run_that_is_gone_is_not_waited_for():
    wait_for_quiet(999_999_999, grace=PATIENCE, limit=PATIENCE)  # no such process: at once
    assert cpu_seconds(999_999_999) is None
    assert cpu_seconds(os.getpid()) > 0
