"""Big inputs: read_file at a late offset of a 1 GB file, and bash printing 1 GB. Each call runs in a child."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import Row, failed_row, mebibytes, median, seconds

MEMORY_TARGET_KIB = 100 * 1024
FILE_BLOCKS = 1000
"""1 MiB blocks in the big file: ~1 GB."""
NEEDED_FREE = 3 * 1024**3
CHILD = Path(__file__).with_name("_child.py")
LINE = "{:06d} abcdefghijklmnopqrstuvwxyz\n"
BASH_COMMAND = "yes 0123456789abcdef | head -c 1000000000"


def _child(*args: str) -> dict:
    done = subprocess.run([sys.executable, str(CHILD), *args], capture_output=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"child exited {done.returncode}: {done.stderr.decode(errors='replace')[-400:]}")
    return json.loads(done.stdout)


def _block() -> tuple[bytes, int]:
    """About 1 MiB of numbered short lines, and how many lines it holds."""
    lines = (1 << 20) // len(LINE.format(0))
    return "".join(LINE.format(i) for i in range(lines)).encode(), lines


def _memory(samples: list[dict]) -> float:
    return max(s["peak_kib"] - s["baseline_kib"] for s in samples)


def read_file_late(runs: int) -> list[Row]:
    name = "read_file, offset at 95% of a 1 GB file (limit 100)"
    target = "< 100 MB above baseline; time reported"
    tmp = Path(tempfile.mkdtemp(prefix="mini-agent-bench-"))
    try:
        free = shutil.disk_usage(tmp).free
        if free < NEEDED_FREE:
            return [Row(name, f"skipped: {free / 1024**3:.1f} GB free in {tmp}, 3 GB needed", target, None)]
        block, per_block = _block()
        path = tmp / "big.txt"
        with open(path, "wb") as out:
            for _ in range(FILE_BLOCKS):
                out.write(block)
        total = per_block * FILE_BLOCKS
        offset = int(total * 0.95)
        expected = LINE.format((offset - 1) % per_block).rstrip("\n")
        samples = [_child("read_file", str(path), str(offset), "100") for _ in range(runs)]
        for sample in samples:
            if f"{offset}\t{expected}" not in sample["head"]:
                raise RuntimeError(f"wrong page at offset {offset}: {sample['head'][:120]!r}")
    except Exception as exc:
        return [failed_row(name, target, f"{type(exc).__name__}: {exc}")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    memory = _memory(samples)
    size = FILE_BLOCKS * len(block) / 1e9
    result = (
        f"{seconds(median([s['seconds'] for s in samples]))}, +{mebibytes(memory)} peak "
        f"(baseline {mebibytes(samples[0]['baseline_kib'])}; {size:.2f} GB, {total:,} lines, offset {offset:,}; "
        "file in page cache)"
    )
    return [Row(name, result, target, memory < MEMORY_TARGET_KIB)]


def bash_flood(runs: int) -> list[Row]:
    name = "bash printing 1 GB (`yes … | head -c 1e9`)"
    target = "< 100 MB above baseline"
    try:
        samples = [_child("bash", BASH_COMMAND) for _ in range(runs)]
        for sample in samples:
            if "exit code: 0" not in sample["tail"] or "omitted" not in sample["tail"]:
                raise RuntimeError(f"unexpected result: {sample['tail'][-200:]!r}")
    except Exception as exc:
        return [failed_row(name, target, f"{type(exc).__name__}: {exc}")]
    memory = _memory(samples)
    result = (
        f"{seconds(median([s['seconds'] for s in samples]))}, +{mebibytes(memory)} peak "
        f"(baseline {mebibytes(samples[0]['baseline_kib'])}; result {samples[0]['chars']:,} chars)"
    )
    return [Row(name, result, target, memory < MEMORY_TARGET_KIB)]
