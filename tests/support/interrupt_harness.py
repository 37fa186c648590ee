"""Runs the bash tool in the main thread so a test can interrupt it with a real SIGINT.

Usage: interrupt_harness.py DIRECTORY. The command writes its process-group id to DIRECTORY/pgid, then sleeps.
Exits 130 after printing "interrupted" if the tool let KeyboardInterrupt through, 0 if the command finished.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mini_agent.tools.base import ToolContext  # noqa: E402
from mini_agent.tools.bash import bash  # noqa: E402


def main() -> int:
    # A parent that ignores SIGINT (a shell's `&` job) would pass that on; the test needs Python's usual handler.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    directory = Path(sys.argv[1])
    ctx = ToolContext(cwd=directory)
    try:
        result = bash.fn(ctx, "echo $$ > pgid.tmp && mv pgid.tmp pgid; sleep 30; echo never", timeout=60)
    except KeyboardInterrupt:
        sys.stdout.write("interrupted\n")
        return 130
    sys.stdout.write(result + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
