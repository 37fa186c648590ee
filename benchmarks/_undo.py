"""Group `undo`: what snapshots and /undo cost on a generated repository of 10,000 files in its own git."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from _common import Row, failed_row, median, millis, seconds

FILES = 10_000
FILE_BYTES = 2048
CHANGED = 10
TARGET = "< 300 ms"


def undo_rows(runs: int) -> list[Row]:
    from mini_agent.undo import Snapshots, UndoStack

    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-undo-") as temp:
        project = generated_repository(Path(temp) / "project")
        cold_times = []
        for attempt in range(min(runs, 3)):
            snapshots = Snapshots(project, Path(temp) / f"store-{attempt}.git")
            started = time.perf_counter()
            first = snapshots.take()
            cold_times.append(time.perf_counter() - started)
            if first is None:
                return [failed_row("Undo: first snapshot (cold)", "—", snapshots.problem)]
        store = snapshots.git.store
        cold = Row(
            f"Undo: first snapshot of {FILES:,} files (cold)",
            f"{seconds(median(cold_times))} (store {disk_use(store) / 1e6:.0f} MB)",
            "— (reported)",
            None,
        )

        warm_times, unchanged_times = [], []
        previous = first
        for run in range(runs):
            started = time.perf_counter()
            same = snapshots.take()
            unchanged_times.append(time.perf_counter() - started)
            change_files(project, f"warm {run}")
            started = time.perf_counter()
            commit = snapshots.take()
            warm_times.append(time.perf_counter() - started)
            if commit is None or len(snapshots.changes(previous, commit)) != CHANGED or same is None:
                why = snapshots.problem or f"expected {CHANGED} changes, got {snapshots.changes(previous, commit)}"
                return [cold, failed_row(f"Undo: snapshot after changing {CHANGED} files (warm)", TARGET, why)]
            previous = commit
        warm_median = median(warm_times)
        warm = Row(
            f"Undo: snapshot after changing {CHANGED} files (warm)",
            f"{millis(warm_median)} (with nothing changed: {millis(median(unchanged_times))})",
            TARGET,
            warm_median < 0.3,
        )

        undo_times = []
        stack = UndoStack(snapshots)
        for run in range(runs):
            stack.begin_turn()
            stack.before_change()
            originals = {path: path.read_bytes() for path in files_to_change(project, f"undo {run}")}
            change_files(project, f"undo {run}")
            stack.end_turn()
            started = time.perf_counter()
            report = stack.undo()
            undo_times.append(time.perf_counter() - started)
            restored = all(path.read_bytes() == content for path, content in originals.items())
            if report.result is None or len(report.result.undone) != CHANGED or not restored:
                why = report.problem or f"restored {report.result} but contents match: {restored}"
                return [cold, warm, failed_row(f"Undo: /undo of a turn that changed {CHANGED} files", TARGET, why)]
        undo_median = median(undo_times)
        undo = Row(
            f"Undo: /undo of a turn that changed {CHANGED} files",
            f"{millis(undo_median)} (max {millis(max(undo_times))})",
            TARGET,
            undo_median < 0.3,
        )
        return [cold, warm, undo]


def generated_repository(root: Path) -> Path:
    """FILES files of ~FILE_BYTES in 10 x 10 nested directories, committed in the project's own git."""
    for number in range(FILES):
        directory = root / f"pkg{number // 1000}" / f"mod{number // 100 % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        line = f"value_{number} = {number}  # generated for the undo benchmark\n"
        (directory / f"file{number}.py").write_text(line * (FILE_BYTES // len(line)))
    (root / ".gitignore").write_text("node_modules/\n")
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="bench")
    env.update(GIT_AUTHOR_EMAIL="bench@localhost", GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost")
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"]):
        subprocess.run(["git", *command], cwd=root, env=env, check=True)
    return root


def files_to_change(project: Path, label: str) -> list[Path]:
    """CHANGED files spread over the tree, a different set for every label."""
    offset = sum(label.encode()) % 97
    return [
        project / f"pkg{number // 1000}" / f"mod{number // 100 % 10}" / f"file{number}.py"
        for number in ((offset + step * 997) % FILES for step in range(CHANGED))
    ]


def change_files(project: Path, label: str) -> list[Path]:
    paths = files_to_change(project, label)
    for path in paths:
        with path.open("a") as out:
            out.write(f"# {label}\n")
    return paths


def disk_use(root: Path) -> int:
    return sum(entry.stat().st_blocks * 512 for entry in root.rglob("*") if entry.is_file())
