"""One long-lived thread that forks the processes which must outlive the call that started them (background jobs).

bubblewrap's --die-with-parent is the parent-death signal, which fires when the *thread* that forked the child
ends, not the process: a job started from a tool's worker thread would die with that thread.

Standard library only, and threads.py (the spawner thread leaves the signals to the main thread).
"""

from __future__ import annotations

import queue
import subprocess
from collections.abc import Callable
from concurrent.futures import Future

from mini_agent import threads


class Spawner:
    """One daemon thread that forks every job, and lives as long as the process."""

    def __init__(self) -> None:
        self._requests: queue.Queue = queue.Queue()
        threads.start(self._serve, name="job-spawner")

    def run(self, spawn: Callable[[], subprocess.Popen]) -> subprocess.Popen:
        future: Future = Future()
        self._requests.put((spawn, future))
        return future.result()

    def _serve(self) -> None:
        while True:
            spawn, future = self._requests.get()
            try:
                future.set_result(spawn())
            except BaseException as exc:
                future.set_exception(exc)
