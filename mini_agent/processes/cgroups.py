"""A command's own cgroup v2: what `Lineage` (tree.py) uses, where the system allows, to kill everything a
contained command started however it left its session (tree.py says when and why).

Standard library only.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

EMPTY_WAIT = 5.0
"""How long a killed cgroup may take to empty (processes in uninterruptible sleep die late)."""
CGROUP_PREFIX = "mini-agent-"

_homes: dict[int, Path | None] = {}
_homes_lock = threading.Lock()


def home() -> Path | None:
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
        remove(home)
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


def kill(cgroup: Path) -> None:
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


def remove(cgroup: Path) -> None:
    try:
        cgroup.rmdir()
    except OSError:
        pass  # still populated (a process in uninterruptible sleep): the watchdog removes it at the end
