"""What the fault guards cost: the bash watchdog per call and once, the write journal, the content-hash check,
and masking a tool's output against the session's known secrets."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from _common import Row, failed_row, median, millis

from mini_agent.processes import run as _process
from mini_agent.processes.watchdog import Watchdog
from mini_agent.tools.base import ToolContext
from mini_agent.tools.bash import bash
from mini_agent.tools.textfile import write_atomic


def fault_rows(runs: int) -> list[Row]:
    rows = []
    measures = (_watchdog_per_call, _watchdog_start, _bash_with_and_without, _journal, _stale_check, _masking)
    for measure in measures:
        try:
            rows.append(measure(runs))
        except Exception as exc:  # one broken measure must not hide the others
            rows.append(failed_row(measure.__name__.strip("_").replace("_", " "), "—", str(exc)))
    return rows


def _watchdog_per_call(runs: int) -> Row:
    """`Watchdog.watch` on a real group of ours (a sleeping process): the bytes a bash call writes to the helper."""
    sleeper = subprocess.Popen(["sleep", "60"], start_new_session=True)
    guard = Watchdog()
    try:
        guard.watch(sleeper.pid)  # starts the helper: not part of the per-call cost
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            for _ in range(100):
                guard.watch(sleeper.pid)
            times.append((time.perf_counter() - started) / 100)
    finally:
        guard._close()  # the helper sees end of file and kills the sleeper's group, as at the agent's death
        sleeper.wait(timeout=10)
    killed = sleeper.returncode == -signal.SIGKILL
    result = f"{median(times) * 1e6:.1f} µs per call ({runs} × 100 calls; the helper killed the group on close)"
    return Row("Watchdog: registering a bash call's process group", result, "< 100 µs", killed and median(times) < 1e-4)


def _watchdog_start(runs: int) -> Row:
    """Starting the helper: paid by the first bash call of a session, never at start-up."""
    times = []
    for _ in range(runs):
        guard = Watchdog()
        started = time.perf_counter()
        guard._start()
        times.append(time.perf_counter() - started)
        guard._close()
    return Row("Watchdog: helper start (first bash call only)", millis(median(times)), "—", None)


def _bash_with_and_without(runs: int) -> Row:
    """A whole `bash true` call with the watchdog and with a do-nothing stand-in, alternated."""

    class NoWatchdog:
        def environment(self) -> dict[str, str]:
            return {}

        def watch(self, group: int) -> None:
            pass

    real = _process.watchdog
    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-faults-") as tmp:
        ctx = ToolContext(cwd=Path(tmp))
        bash.fn(ctx, "true")  # the helper is running from here on, as in a session
        guarded, bare = [], []
        for _ in range(runs):
            for times, factory in ((guarded, real), (bare, NoWatchdog)):
                _process.watchdog = factory
                try:
                    started = time.perf_counter()
                    bash.fn(ctx, "true")
                    times.append(time.perf_counter() - started)
                finally:
                    _process.watchdog = real
    difference = median(guarded) - median(bare)
    result = (
        f"{millis(median(guarded))} with, {millis(median(bare))} without ({difference * 1000:+.2f} ms; "
        f"{runs} alternated pairs, noise of a shared machine included)"
    )
    return Row("Watchdog: `bash true` call with and without it", result, "—", None)


def _journal(runs: int) -> Row:
    """write_atomic of a 1 KB file with the temp-file journal and without."""
    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-faults-") as tmp:
        target, data_dir = Path(tmp) / "a.txt", Path(tmp) / "data"
        journaled, bare = [], []
        for _ in range(runs):
            for times, directory in ((journaled, data_dir), (bare, None)):
                started = time.perf_counter()
                write_atomic(target, b"x" * 1024, directory)
                times.append(time.perf_counter() - started)
    result = f"{millis(median(journaled))} with, {millis(median(bare))} without (fsync of the data included)"
    return Row("Atomic write of 1 KB, temp file journaled", result, "—", None)


def _stale_check(runs: int) -> Row:
    """require_fresh on a 1 MB and a 64 MB file (the largest that is hashed): what a write or edit pays."""
    results = []
    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-faults-") as tmp:
        for size in (1 << 20, 64 << 20):
            path = Path(tmp) / f"{size}.txt"
            with open(path, "wb") as stream:
                stream.write(os.urandom(1 << 20) * (size >> 20))
            ctx = ToolContext(cwd=Path(tmp))
            ctx.remember(path)
            times = []
            for _ in range(max(3, runs // 5)):
                started = time.perf_counter()
                ctx.require_fresh(path)
                times.append(time.perf_counter() - started)
            results.append(f"{size >> 20} MB: {millis(median(times))}")
    return Row("Staleness check by content hash (sha256)", ", ".join(results), "—", None)


def _masking(runs: int) -> Row:
    """1 MB of log output against 20 known secrets (each in every encoding), one of them inside as base64."""
    import base64

    from mini_agent.safety.secrets import SecretSet

    values = [f"secret-{index:02d}-{'k' * index}-Zq9{index}" for index in range(20)]
    secrets = SecretSet([(value, f"S{index}") for index, value in enumerate(values)])
    line = "2024-01-01 12:00:00 INFO request served in 12 ms from 10.0.0.7 path=/api/items?page=3\n"
    text = (line * (1_000_000 // len(line)))[:1_000_000]
    text = text[:500_000] + base64.b64encode(values[7].encode()).decode() + text[500_000:]
    times = []
    for _ in range(max(3, runs // 10)):
        started = time.perf_counter()
        secrets.mask(text)
        times.append(time.perf_counter() - started)
    return Row("Masking 1 MB of output against 20 known secrets (every encoding)", millis(median(times)), "—", None)
