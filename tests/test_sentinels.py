"""Tests that find a command by its exact argv (`process_running("sleep", "60.4242")`) each use a number no
other test file uses: xdist runs files side by side, and a test that finds another file's `sleep` signals,
waits on or kills the wrong process (seen: two files sharing `sleep 60.7373` failed when they ran at once)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SENTINEL = re.compile(r"\b[1-9]\d\.\d{4}\b")


def test_every_sentinel_number_belongs_to_one_test_file():
    files: dict[str, set[str]] = defaultdict(set)
    for path in TESTS.rglob("*.py"):
        if path != Path(__file__).resolve():
            for number in SENTINEL.findall(path.read_text()):
                files[number].add(str(path.relative_to(TESTS)))
    assert len(files) > 10  # the scan sees the suite's sentinels
    shared = {number: sorted(paths) for number, paths in files.items() if len(paths) > 1}
    assert not shared, f"sentinels used by more than one file: {shared}"
