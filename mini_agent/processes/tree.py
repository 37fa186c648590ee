"""Everything one command started, and the one way to kill all of it (`Lineage`).

A process group is not enough: `setsid`, a double fork or `env -i` take a process out of its group and away from
the watchdog's environment token. A *contained* command (one confined by a mechanism without a PID namespace:
Landlock, Seatbelt) is therefore tracked by something it cannot leave:

- a cgroup of its own, where the system offers cgroup v2 with our own cgroup writable (root in a container, a
  desktop session's delegated scope) *and* mounted with `favordynmods`. The command joins it between fork and
  exec, before it can fork; at the end `cgroup.kill` kills every member, however it left its session. The
  confined command cannot write the cgroup files (the sandbox keeps /sys read-only), so it cannot move out. All
  of an agent's cgroups sit under one `mini-agent-<pid>` directory, which the watchdog kills when the agent dies.
  Without `favordynmods` each move into a cgroup waits for an RCU grace period (measured 9-17 ms on a loaded
  2-core machine), most of the per-command budget, so there:
- the agent is the child subreaper while contained commands run: a process whose parent exits is re-parented to
  the agent instead of init, so the orphans of a contained command are the agent's own children, recognisable
  by no_new_privs (set on every confined command, and never dropped) and by not being a process the agent
  started itself (every `Lineage.spawn` is registered while it runs). At the end they are killed, their children
  with them. Limits: it cannot tell two contained commands running side by side apart (one's end also kills the
  other's orphans), what outlives a killed agent is re-parented to init, and it is off when the agent itself runs
  with no_new_privs (then every child carries it).

Bubblewrap needs neither: its PID namespace dies with its init. An unconfined command is a process group, killed
whole on timeout or Ctrl-C, whose background jobs live until the session ends (see processes/watchdog.py).
The cgroup is cgroups.py, the subreaper orphans.py. Standard library only; hooks and tools both use it.
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from mini_agent import threads
from mini_agent.processes import cgroups
from mini_agent.processes.orphans import ORPHANS

KILL_GRACE = 2.0
"""Between SIGTERM and SIGKILL: time for the processes to clean up after themselves."""


class Lineage:
    """One command's processes. Start it with `spawn`, end it with `kill`, release it with `close`.

    contained: everything the command started dies at `kill`, not only its process group (see the module)."""

    _numbers = itertools.count(1)

    def __init__(self, contained: bool = False) -> None:
        self.contained = contained
        self.process: subprocess.Popen | None = None
        self._leads_group = True
        self.cgroup: Path | None = None
        self._join: int | None = None
        self._orphans = False
        if not contained:
            return
        home = cgroups.home()
        if home is not None:
            cgroup = home / f"{next(self._numbers)}"
            try:
                cgroup.mkdir()
                self._join = os.open(cgroup / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
                self.cgroup = cgroup
            except OSError:
                cgroups.remove(cgroup)
        if self.cgroup is None and sys.platform.startswith("linux"):
            self._orphans = ORPHANS.enter()

    def spawn(
        self, argv: list[str], preexec_fn: Callable[[], None] | None = None, new_session: bool = True, **popen
    ) -> subprocess.Popen:
        """`subprocess.Popen`, joined to the lineage's cgroup before `preexec_fn` runs. `new_session`: in a
        session (and process group) of its own; without it, the terminal's signals reach it as they reach us.
        Started from a background thread (a batch's pool, the jobs' spawner), it still takes every signal."""
        join, first, unblock = self._join, preexec_fn, threads.child_preexec()

        def preexec() -> None:
            if unblock is not None:
                unblock()
            if join is not None:
                os.write(join, b"0")  # the child moves itself: nothing it forks later can be outside
            if first is not None:
                first()

        needed = preexec if (join is not None or first is not None or unblock is not None) else None
        with ORPHANS.lock:  # a sweep must not take a brand-new confined process of ours for an orphan
            self.process = subprocess.Popen(argv, start_new_session=new_session, preexec_fn=needed, **popen)
            self._leads_group = new_session
            ORPHANS.spawned.add(self.process.pid)
        return self.process

    def kill(self, grace: float = KILL_GRACE) -> None:
        """SIGTERM the process group, SIGKILL what is left of it after `grace` (or if we are interrupted); for a
        contained command, then SIGKILL everything else it started."""
        if self.process is not None and self._leads_group:
            kill_group(self.process, grace)
        if self.cgroup is not None:
            cgroups.kill(self.cgroup)
        elif self._orphans:
            ORPHANS.sweep()

    def close(self) -> None:
        """Release the cgroup (once empty) and the subreaper; call after the process was waited for."""
        if self._join is not None:
            os.close(self._join)
            self._join = None
        if self.cgroup is not None:
            cgroups.remove(self.cgroup)
            self.cgroup = None
        if self.process is not None:
            ORPHANS.forget(self.process.pid)
        if self._orphans:
            self._orphans = False
            ORPHANS.leave()


def kill_group(process: subprocess.Popen, grace: float = KILL_GRACE) -> None:
    """SIGTERM the process group led by `process`, then SIGKILL whatever is left after `grace` (or if we are
    interrupted); grace 0 is SIGKILL at once."""
    group = process.pid  # started in a new session: it leads its own group
    if grace > 0:
        if not _signal_group(group, signal.SIGTERM):
            process.poll()
            return
        try:
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                process.poll()  # reap the leader, or its zombie keeps the group alive
                if not _signal_group(group, 0):
                    return
                time.sleep(0.02)
        finally:
            _signal_group(group, signal.SIGKILL)
    else:
        _signal_group(group, signal.SIGKILL)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def _signal_group(group: int, signum: int) -> bool:
    """Send a signal to a process group; False if the group no longer exists."""
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # only a reused id can refuse us; nothing of ours is left there
        return False
    return True
