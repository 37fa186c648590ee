"""Run one big-I/O tool call in a fresh process and print its time and memory as JSON.

    python benchmarks/_child.py read_file PATH OFFSET LIMIT
    python benchmarks/_child.py bash COMMAND

Peak memory is this process's peak resident set (the agent's own; a command's processes are not in it), compared
with the baseline taken after the imports, so the numbers say what the call itself cost. On Linux it is VmHWM
from /proc/self/status: ru_maxrss (RUSAGE_SELF) would do, except that Linux carries it over from the parent
across fork and exec, so a child of a big benchmark process would start with the parent's peak.
"""

from __future__ import annotations

import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from mini_agent.tools.base import ToolContext, ToolResult
from mini_agent.tools.bash import bash
from mini_agent.tools.read_file import read_file


def max_rss_kib() -> int:
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def main(argv: list[str]) -> None:
    kind = argv[0]
    baseline = max_rss_kib()
    started = time.monotonic()
    if kind == "read_file":
        path, offset, limit = Path(argv[1]), int(argv[2]), int(argv[3])
        text = read_file.fn(ToolContext(cwd=path.parent), str(path), offset=offset, limit=limit)
    elif kind == "bash":
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-") as tmp:
            text = bash.fn(ToolContext(cwd=Path(tmp)), command=argv[1], timeout=600)
    else:
        raise SystemExit(f"unknown kind {kind!r}")
    elapsed = time.monotonic() - started
    if isinstance(text, ToolResult):  # bash answers with the exit code beside the text
        text = text.content
    print(
        json.dumps(
            {
                "seconds": elapsed,
                "baseline_kib": baseline,
                "peak_kib": max_rss_kib(),
                "chars": len(text),
                "head": text[:200],
                "tail": text[-400:],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1:])
