"""The OS sandbox's start-up cost per command: `true` and `ls` through run_captured, unconfined and under each
mechanism and level present here (Landlock forced through MINI_AGENT_SANDBOX), timing confine + run + cleanup."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from _common import Row, failed_row, median, millis

ADDED_TARGET = 0.015
COMMANDS = (["true"], ["ls", "-la"])


def sandbox_rows(runs: int) -> list[Row]:
    from mini_agent.safety.sandbox import probe

    rows: list[Row] = []
    saved = os.environ.get(probe.ENV_VARIABLE)
    try:
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-sandbox-") as tmp:
            root = Path(tmp) / "project"
            root.mkdir()
            for index in range(50):
                (root / f"file{index}.txt").write_text("x\n")
            _repository(root)
            _first_command(root)
            _settle()
            for argv in COMMANDS:
                rows += _rows_for(argv, root, runs)
    finally:
        if saved is None:
            os.environ.pop(probe.ENV_VARIABLE, None)
        else:
            os.environ[probe.ENV_VARIABLE] = saved
    return rows


def _first_command(root: Path) -> None:
    """A session's first confined command makes its private directory in /tmp, which changes /tmp's listing: run
    one before settling, so the rows measure a session's commands after its first, not the few seconds after it
    in which /tmp (hundreds of entries on a used machine) is scanned afresh for service sockets."""
    from mini_agent.safety.sandbox import Confinement, confine

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    launch = confine(["true"], env, root, Confinement("workspace-write", root))
    launch.cleanup()


def _settle() -> None:
    """Let the project become one that existed before the session: the sandbox remembers what lies in directories
    only once they have not changed for a few seconds (safety/sandbox/listings.py), and a project made a moment
    ago would have its first rows measured without that, its later ones with it."""
    from mini_agent.safety.sandbox.listings import SETTLED_NS

    time.sleep(SETTLED_NS / 1e9 + 0.5)


def _repository(root: Path) -> None:
    """A git repository with loose objects and refs: each workspace-write command guards its git dir (gitguard)."""
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    for index in range(0, 50, 10):
        subprocess.run([*git, "add", *(f"file{n}.txt" for n in range(index, index + 10))], cwd=root, check=True)
        subprocess.run([*git, "commit", "-qm", f"files {index}"], cwd=root, check=True)


def _rows_for(argv: list[str], root: Path, runs: int) -> list[Row]:
    from mini_agent.safety.sandbox import Confinement, mechanism, unavailable_reason

    name = " ".join(argv)
    baseline = _times(argv, root, None, runs * 10)
    rows = [Row(f"`{name}` through run_captured, unconfined", _stats(baseline), "—", None)]
    for forced in ("bubblewrap", "landlock"):
        os.environ["MINI_AGENT_SANDBOX"] = forced
        found = mechanism()
        for level in ("read-only", "workspace-write"):
            label = f"`{name}` under {forced}, {level} (added vs unconfined)"
            if found is None:
                rows.append(Row(label, f"not available: {unavailable_reason()}", "—", None))
                continue
            try:
                times = _times(argv, root, Confinement(level, root), runs * 10)
            except Exception as exc:
                rows.append(failed_row(label, f"< {ADDED_TARGET * 1000:.0f} ms added", str(exc)))
                continue
            added = median(times) - median(baseline)
            result = f"+{added * 1000:.1f} ms ({_stats(times)})"
            rows.append(Row(label, result, f"< {ADDED_TARGET * 1000:.0f} ms added", added < ADDED_TARGET))
    return rows


def _times(argv: list[str], root: Path, confinement, count: int) -> list[float]:
    from mini_agent.processes.run import BoundedOutput, run_captured, run_launched
    from mini_agent.safety.sandbox import confine

    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    times = []
    for index in range(count + 1):  # the first run warms the probe and the page cache
        started = time.perf_counter()
        output = BoundedOutput(30_000, 30_000)
        if confinement is None:
            finished = run_captured(argv, root, env, 30, output)
        else:
            launch = confine(argv, env, root, confinement)
            try:
                finished = run_launched(launch, root, 30, output)
            finally:
                launch.cleanup()
        if finished.returncode != 0:
            raise RuntimeError(f"{argv} exited {finished.returncode}: {output.head[:200]}")
        if index:
            times.append(time.perf_counter() - started)
    return times


def _stats(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"median {millis(median(values))}, p95 {millis(p95)}, n={len(values)}"
