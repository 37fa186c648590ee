"""When a warm server started by a run may load: once that run has ended, or while it is quiet.

Loading (~3 s of CPU) beside the run that started the server slows that run wherever the cores are busy; it
used to wait for the run only GRACE seconds, so a run longer than that (a first run's five steps on a loaded
machine, any longer task) shared the CPU with it. Now a run that outlasts GRACE is watched: the server loads
once the run has been quiet for a sample (below QUIET_SHARE of a core: waiting for the model, a REPL at its
prompt) or has ended, or after LIMIT seconds whatever it does, so that a long session still gets its server.
"""

from __future__ import annotations

import os
import select
import time

GRACE = 3.0
"""Seconds the server waits for the run to end before it looks at whether the run is busy."""
SAMPLE = 0.25
QUIET_SHARE = 0.2
"""Below this share of one core over a SAMPLE, the run counts as quiet."""
LIMIT = 60.0
"""Seconds after which the server loads however busy the run is."""


def wait_for_quiet(pid: int, grace: float = GRACE, limit: float = LIMIT, sample: float = SAMPLE, cpu=None) -> None:
    """Return once process `pid` has ended, or (after `grace`) has been quiet for a `sample`, or after `limit`.
    `cpu(pid)`: its CPU seconds so far (cpu_seconds)."""
    cpu = cpu or cpu_seconds
    try:
        handle = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return
    try:
        deadline = time.monotonic() + limit
        if _ended(handle, grace):
            return
        used = cpu(pid)
        while used is not None and time.monotonic() < deadline:
            if _ended(handle, sample):
                return
            now = cpu(pid)
            if now is None or now - used < QUIET_SHARE * sample:
                return
            used = now
    finally:
        os.close(handle)


def _ended(handle: int, timeout: float) -> bool:
    ready, _, _ = select.select([handle], [], [], timeout)
    return bool(ready)


def cpu_seconds(pid: int) -> float | None:
    """The CPU time process `pid` has used (all its threads), or None when it cannot be read (gone, not Linux)."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            fields = file.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None
