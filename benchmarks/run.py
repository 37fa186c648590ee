"""Benchmarks of mini-agent against the issue's targets; prints a markdown table.

    python benchmarks/run.py                  # everything, ~2 minutes on 2 cores
    python benchmarks/run.py --quick          # fewer repetitions
    python benchmarks/run.py --only oneshot   # one group (or several, comma-separated)

Every model call goes to the loopback fake of tests/support/fake_api.py; nothing leaves the machine. Each group
runs in a fresh interpreter of its own, so no figure depends on which groups ran before it.
See benchmarks/README.md for what each number means.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: E402
from _common import Row, failed_row  # noqa: E402

# (full, quick) repetitions per group.
RUNS = {
    "version": (10, 5),
    "help": (10, 5),
    "import": (9, 3),
    "oneshot": (9, 3),
    "step": (12, 6),
    "first-steps": (7, 3),
    "read-file": (3, 1),
    "bash": (3, 1),
    "context": (30, 10),
    "repl": (9, 3),
    "type-ahead": (7, 3),
    "shell": (10, 3),
    "undo": (10, 3),
    "sessions": (15, 5),
    "render": (3, 1),
    "sandbox": (5, 2),
    "faults": (50, 15),
    "mcp": (5, 2),
    "warm": (7, 3),
    "first-run": (7, 3),
}
ALIASES = {"first-request": "oneshot", "exit": "oneshot", "import-anthropic": "import", "read_file": "read-file"}


def measures(quick: bool) -> dict[str, Callable[[], list[Row]]]:
    import _bigio
    import _startup

    def runs(group: str) -> int:
        return RUNS[group][1 if quick else 0]

    def step() -> list[Row]:
        import _steps

        return _steps.step_overhead(runs("step"))

    def first_steps() -> list[Row]:
        import _first_steps

        return _first_steps.first_steps(runs("first-steps"))

    def repl() -> list[Row]:
        import _repl

        return _repl.prompt_rows(runs("repl"))

    def type_ahead() -> list[Row]:
        import _type_ahead

        return _type_ahead.type_ahead_rows(runs("type-ahead"))

    def context() -> list[Row]:
        import _context

        return _context.context_rows(runs("context"))

    def shell() -> list[Row]:
        import _shell

        return _shell.shell_rows(runs("shell"))

    def undo() -> list[Row]:
        import _undo

        return _undo.undo_rows(runs("undo"))

    def sessions() -> list[Row]:
        import _sessions

        return _sessions.session_rows(runs("sessions"))

    def render() -> list[Row]:
        import _render

        return _render.render_rows(runs("render"))

    def sandbox() -> list[Row]:
        import _sandbox

        return _sandbox.sandbox_rows(runs("sandbox"))

    def faults() -> list[Row]:
        import _faults

        return _faults.fault_rows(runs("faults"))

    def warm() -> list[Row]:
        import _warm

        return _warm.warm_rows(runs("warm"))

    def first_run() -> list[Row]:
        import _first_run

        return _first_run.first_run_rows(runs("first-run"))

    def mcp() -> list[Row]:
        import _mcp

        return _mcp.mcp_rows(runs("mcp"))

    return {
        "version": lambda: _startup.version(runs("version")),
        "help": lambda: _startup.help_(runs("help")),
        "import": lambda: _startup.import_row(runs("import")),
        "oneshot": lambda: _startup.one_shot(runs("oneshot")),
        "step": step,
        "first-steps": first_steps,
        "read-file": lambda: _bigio.read_file_late(runs("read-file")),
        "bash": lambda: _bigio.bash_flood(runs("bash")),
        "context": context,
        "repl": repl,
        "type-ahead": type_ahead,
        "shell": shell,
        "undo": undo,
        "sessions": sessions,
        "render": render,
        "sandbox": sandbox,
        "faults": faults,
        "mcp": mcp,
        "warm": warm,
        "first-run": first_run,
    }


def table(rows: list[Row]) -> str:
    marks = {True: "pass", False: "**FAIL**", None: "—"}
    lines = ["| Measure | Result (median) | Target | Pass |", "|---|---|---|---|"]
    for row in rows:
        cells = [row.name, row.result, row.target, marks[row.passed]]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def in_own_process(name: str, quick: bool, pycache: str) -> list[Row]:
    """One group in a fresh interpreter: what a group measures must not depend on what ran before it in the same
    process (a fork with `preexec_fn`, as a Landlock-confined command is started, copies the whole process, and
    the render and undo groups leave it hundreds of MB bigger)."""
    argv = [sys.executable, __file__, "--group", name, "--pycache", pycache] + (["--quick"] if quick else [])
    done = subprocess.run(argv, stdout=subprocess.PIPE, text=True)
    try:
        return [Row(**row) for row in json.loads(done.stdout)]
    except (ValueError, TypeError):
        return [failed_row(name, "—", f"the group's process exited {done.returncode}: {done.stdout[-300:]!r}")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--only", metavar="NAME", help=f"comma-separated groups: {', '.join(RUNS)}")
    parser.add_argument("--group", help=argparse.SUPPRESS)  # one group, its rows as JSON (in_own_process)
    parser.add_argument("--pycache", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    # A SIGTERM unwinds like Ctrl-C, so the 1 GB temp file is deleted by its `finally`.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    available = measures(args.quick)
    if args.group:
        _common.PYCACHE = Path(args.pycache)
        print(json.dumps([dataclasses.asdict(row) for row in available[args.group]()]))
        return 0
    chosen = list(available)
    if args.only:
        chosen = [ALIASES.get(name.strip(), name.strip()) for name in args.only.split(",")]
        unknown = [name for name in chosen if name not in available]
        if unknown:
            parser.error(f"unknown measure {', '.join(unknown)}; choose from {', '.join(available)}")
    rows: list[Row] = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-pycache-") as pycache:
        for name in chosen:
            print(f"… {name}", file=sys.stderr, flush=True)
            rows += in_own_process(name, args.quick, pycache)
    print(table(rows))
    print(
        f"\n{os.cpu_count()} cores, Python {sys.version.split()[0]}, {'quick' if args.quick else 'full'} run, "
        f"{time.monotonic() - started:.0f} s."
    )
    return 1 if any(row.passed is False for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
