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
Standard library only; hooks and tools both use it.
"""

from __future__ import annotations

import ctypes
import functools
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

KILL_GRACE = 2.0
"""Between SIGTERM and SIGKILL: time for the processes to clean up after themselves."""
EMPTY_WAIT = 5.0
"""How long a killed cgroup may take to empty (processes in uninterruptible sleep die late)."""
SWEEP_ROUNDS = 50
"""Orphan sweeps at most: each round kills what the previous round's deaths re-parented to us."""
PR_SET_CHILD_SUBREAPER = 36
CGROUP_PREFIX = "mini-agent-"


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
        home = cgroup_home()
        if home is not None:
            cgroup = home / f"{next(self._numbers)}"
            try:
                cgroup.mkdir()
                self._join = os.open(cgroup / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)
                self.cgroup = cgroup
            except OSError:
                _remove(cgroup)
        if self.cgroup is None and sys.platform.startswith("linux"):
            self._orphans = _ORPHANS.enter()

    def spawn(
        self, argv: list[str], preexec_fn: Callable[[], None] | None = None, new_session: bool = True, **popen
    ) -> subprocess.Popen:
        """`subprocess.Popen`, joined to the lineage's cgroup before `preexec_fn` runs. `new_session`: in a
        session (and process group) of its own; without it, the terminal's signals reach it as they reach us."""
        join, first = self._join, preexec_fn

        def preexec() -> None:
            if join is not None:
                os.write(join, b"0")  # the child moves itself: nothing it forks later can be outside
            if first is not None:
                first()

        needed = preexec if (join is not None or first is not None) else None
        with _ORPHANS.lock:  # a sweep must not take a brand-new confined process of ours for an orphan
            self.process = subprocess.Popen(argv, start_new_session=new_session, preexec_fn=needed, **popen)
            self._leads_group = new_session
            _ORPHANS.spawned.add(self.process.pid)
        return self.process

    def kill(self, grace: float = KILL_GRACE) -> None:
        """SIGTERM the process group, SIGKILL what is left of it after `grace` (or if we are interrupted); for a
        contained command, then SIGKILL everything else it started."""
        if self.process is not None and self._leads_group:
            kill_group(self.process, grace)
        if self.cgroup is not None:
            _kill_cgroup(self.cgroup)
        elif self._orphans:
            _ORPHANS.sweep()

    def close(self) -> None:
        """Release the cgroup (once empty) and the subreaper; call after the process was waited for."""
        if self._join is not None:
            os.close(self._join)
            self._join = None
        if self.cgroup is not None:
            _remove(self.cgroup)
            self.cgroup = None
        if self.process is not None:
            _ORPHANS.forget(self.process.pid)
        if self._orphans:
            self._orphans = False
            _ORPHANS.leave()


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


# ---- cgroups ---------------------------------------------------------------------------------------------------

_homes: dict[int, Path | None] = {}
_homes_lock = threading.Lock()


def cgroup_home() -> Path | None:
    """This agent's `mini-agent-<pid>` cgroup (made on first use, and handed to the watchdog), or None where
    cgroup v2 is absent, read-only or not ours to write, or lacks `cgroup.kill` (Linux < 5.14)."""
    with _homes_lock:
        pid = os.getpid()
        if pid not in _homes:  # per process: a forked child is not its parent's agent
            _homes[pid] = _make_home()
            if _homes[pid] is not None:
                from mini_agent.processes.watchdog import watchdog

                watchdog().watch_cgroup(_homes[pid])
        return _homes[pid]


def _make_home() -> Path | None:
    base = _own_cgroup()
    if base is None or not cheap_moves() or not os.access(base / "cgroup.procs", os.W_OK):
        return None  # a process can only be moved below a cgroup whose members we may move
    home = base / f"{CGROUP_PREFIX}{os.getpid()}"
    try:
        home.mkdir()
    except FileExistsError:  # a previous agent with our pid left it (killed); its processes are long dead
        pass
    except OSError:
        return None
    if not (home / "cgroup.kill").exists():
        _remove(home)
        return None
    return home


def cheap_moves() -> bool:
    """Whether the cgroup2 file system is mounted with `favordynmods`: moving a process then costs no RCU grace
    period (see the module)."""
    mount = _cgroup2_mount()
    return mount is not None and "favordynmods" in mount[-1].split(",")


def _cgroup2_mount() -> list[str] | None:
    """The /proc/self/mountinfo fields of the cgroup2 mount, or None."""
    try:
        with open("/proc/self/mountinfo") as lines:
            return next((line.split() for line in lines if " - cgroup2 " in line), None)
    except OSError:
        return None


def _own_cgroup() -> Path | None:
    """The directory of this process's cgroup v2, from /proc/self/cgroup and the cgroup2 mount point."""
    try:
        with open("/proc/self/cgroup") as lines:
            own = next((line[3:].strip() for line in lines if line.startswith("0::")), None)
    except OSError:
        return None
    fields = _cgroup2_mount()
    if own is None or fields is None or ".." in own:  # a cgroup outside our namespace's view
        return None
    root, mount = fields[3], fields[4]
    if not own.startswith(root):
        return None
    return Path(mount) / own[len(root) :].lstrip("/")


def _kill_cgroup(cgroup: Path) -> None:
    """SIGKILL every process in `cgroup` and its children, and wait (bounded) until it is empty."""
    try:
        (cgroup / "cgroup.kill").write_text("1")
    except OSError:
        return
    deadline = time.monotonic() + EMPTY_WAIT
    while _populated(cgroup) and time.monotonic() < deadline:
        time.sleep(0.005)


def _populated(cgroup: Path) -> bool:
    try:
        return "populated 1" in (cgroup / "cgroup.events").read_text()
    except OSError:
        return False


def _remove(cgroup: Path) -> None:
    try:
        cgroup.rmdir()
    except OSError:
        pass  # still populated (a process in uninterruptible sleep): the watchdog removes it at the end


# ---- the subreaper ---------------------------------------------------------------------------------------------


class _Orphans:
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


_ORPHANS = _Orphans()
