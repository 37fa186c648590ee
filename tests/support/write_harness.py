"""Runs an atomic write that stops once its temporary file is on disk, so a test can kill -9 it right there.

Usage: write_harness.py TARGET DATA_DIR. Prints "writing" when the temporary file has all its bytes and the
write is about to be flushed, then waits to be killed. The pause is this harness's own (it replaces fsync):
production code never sleeps.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mini_agent.tools.textfile import write_atomic  # noqa: E402


def stop_here(fd: int) -> None:
    sys.stdout.write("writing\n")
    sys.stdout.flush()
    while True:
        signal.pause()


def main() -> int:
    os.fsync = stop_here
    write_atomic(Path(sys.argv[1]), b"new content\n" * 100_000, Path(sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
