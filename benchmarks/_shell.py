"""The shell-command classifier: loading tree-sitter-bash in a fresh interpreter, and classifying the test corpus."""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Row, child_env, failed_row, median, millis
from support.shell_corpus import CORPUS  # tests/ is on the path via _common

CLASSIFY_TARGET = 0.001
LOAD_CODE = (
    "import time\n"
    "started = time.perf_counter()\n"
    "import tree_sitter, tree_sitter_bash\n"
    "tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))\n"
    "print(time.perf_counter() - started)\n"
)


def shell_rows(runs: int) -> list[Row]:
    return parser_load(runs) + classification(runs)


def parser_load(runs: int) -> list[Row]:
    """Importing tree-sitter and building the bash parser, in a fresh interpreter each time: what the first
    classified command of a session pays."""
    name = "Shell parser load (tree-sitter-bash, cold, fresh process)"
    try:
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-shell-") as tmp:
            env = child_env(Path(tmp))
            times = [_child_load(env, tmp) for _ in range(runs + 1)][1:]  # the first run warms the page cache
    except Exception as exc:
        return [failed_row(name, "—", str(exc))]
    return [Row(name, millis(median(times)), "—", None)]


def _child_load(env: dict[str, str], cwd: str) -> float:
    done = subprocess.run([sys.executable, "-c", LOAD_CODE], env=env, cwd=cwd, capture_output=True, check=True)
    return float(done.stdout.decode().strip())


def classification(runs: int) -> list[Row]:
    """Every corpus command classified `runs` times with the parser already loaded; per command the median,
    then the median, 95th percentile and maximum over the corpus."""
    name = f"Command classification (median per command, corpus of {len(CORPUS)})"
    target = f"< {millis(CLASSIFY_TARGET)}"
    try:
        per_command = _per_command(runs)
    except Exception as exc:
        return [failed_row(name, target, str(exc))]
    ordered = sorted(per_command)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    typical = statistics.median(per_command)
    return [
        Row(name, _fine(typical), target, typical < CLASSIFY_TARGET),
        Row("Command classification, 95th percentile / slowest", f"{_fine(p95)} / {_fine(ordered[-1])}", "—", None),
    ]


def _fine(value: float) -> str:
    return f"{value * 1000:.2f} ms"


def _per_command(runs: int) -> list[float]:
    from mini_agent.safety.shell import classify
    from mini_agent.safety.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-shell-") as tmp:
        base = Path(tmp).resolve()
        (base / "project").mkdir()
        (base / "home").mkdir()
        workspace = Workspace(root=base / "project", home=base / "home")
        classify("ls", workspace)  # loads the parser
        times: list[list[float]] = [[] for _ in CORPUS]
        for _ in range(runs):
            for index, (command, _, _) in enumerate(CORPUS):
                started = time.perf_counter()
                classify(command, workspace)
                times[index].append(time.perf_counter() - started)
        return [median(samples) for samples in times]
