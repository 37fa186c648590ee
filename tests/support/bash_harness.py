"""Runs bash tool calls in a real process a test can kill -9: one command per line of stdin.

Usage: bash_harness.py DIRECTORY. After each call prints `done <pid of the watchdog helper>` and waits for the
next line; the test kills it whenever it likes.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mini_agent.processes.watchdog import watchdog  # noqa: E402
from mini_agent.tools.base import ToolContext  # noqa: E402
from mini_agent.tools.bash import bash  # noqa: E402


def main() -> int:
    ctx = ToolContext(cwd=Path(sys.argv[1]))
    for line in sys.stdin:
        bash.fn(ctx, line, timeout=60)
        helper = watchdog()._helper
        sys.stdout.write(f"done {helper.pid if helper else 0}\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
