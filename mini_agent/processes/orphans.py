"""The agent as child subreaper: where no cgroup of its own is available, the orphans of a contained command
are re-parented to the agent and swept when the command ends (tree.py says when and why).

Standard library only.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import threading
import time
from collections.abc import Callable

from mini_agent.processes.cgroups import EMPTY_WAIT

SWEEP_ROUNDS = 50
"""Orphan sweeps at most: each round kills what the previous round's deaths re-parented to us."""
PR_SET_CHILD_SUBREAPER = 36


class Orphans:
    """The agent as child subreaper while at least one contained command runs, and the sweep of its orphans."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.spawned: set[int] = set()
        """What the agent started through `Lineage.spawn` and has not released: its children, never orphans
        (a confined `git status` or another call's shell carries no_new_privs too)."""
        self._running = 0

    def enter(self) -> bool:
        with self.lock:
            if self._running == 0 and (_no_new_privs(os.getpid()) or not _set_subreaper(True)):
                return False
            self._running += 1
            return True

    def leave(self) -> None:
        with self.lock:
            self._running -= 1
            if self._running == 0:
                _set_subreaper(False)

    def forget(self, pid: int) -> None:
        with self.lock:
            self.spawned.discard(pid)

    def sweep(self) -> None:
        """SIGKILL and reap the agent's confined children that no running command leads, until none is left."""
        me = os.getpid()
        with self.lock:
            for _ in range(SWEEP_ROUNDS):
                strays = [pid for pid in _children(me) if pid not in self.spawned and _no_new_privs(pid)]
                if not strays:
                    return
                table = _process_table()
                for pid in strays:
                    _kill_tree(pid, table)
                _reap(strays, time.monotonic() + EMPTY_WAIT)


def _reap(children: list[int], deadline: float) -> None:
    """Wait for killed children of ours, until `deadline`: one stuck in uninterruptible sleep must not hold the
    lock every spawn takes (its zombie is reaped by a later sweep)."""
    pending = set(children)
    while pending:
        for pid in list(pending):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                pending.discard(pid)
        if pending:
            if time.monotonic() > deadline:
                return
            time.sleep(0.002)


@functools.cache
def _prctl() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    return libc.prctl


def _set_subreaper(on: bool) -> bool:
    prctl = _prctl()
    return prctl is not None and prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0


def _children(pid: int) -> list[int]:
    """The children of every thread of `pid` (the kernel's lists; a scan of /proc where they are missing)."""
    found: list[int] = []
    try:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/children") as listing:
                found += [int(child) for child in listing.read().split()]
    except FileNotFoundError:  # a thread that just ended, or a kernel without CONFIG_PROC_CHILDREN
        return _process_table().get(pid, [])
    return found


def _process_table() -> dict[int, list[int]]:
    """Each process's children, from /proc (ppid is a process's, not a thread's: it covers all our threads)."""
    table: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (parent := _parent(int(entry))) is not None:
            table.setdefault(parent, []).append(int(entry))
    return table


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[-1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _no_new_privs(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return any(line.split() == ["NoNewPrivs:", "1"] for line in status)
    except OSError:
        return False


def _kill_tree(pid: int, table: dict[int, list[int]]) -> None:
    """Stop `pid` and its descendants (none forks while its siblings die), then SIGKILL them all."""
    members, pending = [], [pid]
    while pending:
        current = pending.pop()
        members.append(current)
        pending += table.get(current, [])
    for signum in (signal.SIGSTOP, signal.SIGKILL):
        for member in members:
            try:
                os.kill(member, signum)
            except OSError:
                pass


ORPHANS = Orphans()
"""The one subreaper state of this process."""
