"""The benchmark scripts keep up with the code they measure: a rename in mini_agent that a benchmark still imports
by its old name, or a tool whose answer changed shape, fails here instead of as an error row in the next table
(benchmarks/ run no test of their own, and take minutes)."""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def imported_names() -> list[tuple[str, str, str]]:
    """(benchmark file, module, name) for every `from mini_agent... import name`, at any depth of the file."""
    found = []
    for path in sorted(BENCHMARKS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mini_agent"):
                found += [(path.name, node.module, alias.name) for alias in node.names]
    return found


def test_the_benchmarks_import_from_mini_agent():
    assert len(imported_names()) > 20  # the scan found the benchmarks' imports


@pytest.mark.parametrize(("file", "module", "name"), imported_names())
def test_every_name_a_benchmark_imports_exists(file: str, module: str, name: str):
    imported = importlib.import_module(module)
    if not hasattr(imported, name) and hasattr(imported, "__path__"):  # a submodule not imported yet
        importlib.import_module(f"{module}.{name}")
    assert hasattr(imported, name), f"benchmarks/{file}: {name} is not in {module}"


def test_the_big_output_child_measures_a_bash_call_and_a_read(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    child = BENCHMARKS / "_child.py"
    heads = []
    for args in (["bash", "echo measured"], ["read_file", str(tmp_path / "notes.txt"), "1", "10"]):
        done = subprocess.run([sys.executable, str(child), *args], capture_output=True, text=True, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        record = json.loads(done.stdout)
        assert record["chars"] > 0 and record["peak_kib"] >= record["baseline_kib"] > 0
        heads.append(record["head"])
    assert "measured" in heads[0] and "two" in heads[1]
