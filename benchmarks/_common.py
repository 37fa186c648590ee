"""What every benchmark shares: result rows, medians, the loopback model, a clean environment for children."""

from __future__ import annotations

import os
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.fake_api import FakeAnthropicAPI, answer, tool_use  # noqa: E402,F401  (re-exported for the measures)

PYCACHE: Path | None = None
"""Where children keep their bytecode; run.py points it at a temp dir for the run (see child_env)."""


@dataclass(frozen=True)
class Row:
    """One line of the table. `passed` is None for a reference number without a target."""

    name: str
    result: str
    target: str
    passed: bool | None


def failed_row(name: str, target: str, why: str) -> Row:
    return Row(name, f"error: {why}", target, False)


def median(values: list[float]) -> float:
    return statistics.median(values)


def seconds(value: float) -> str:
    return f"{value:.3f} s"


def millis(value: float) -> str:
    return f"{value * 1000:.1f} ms"


def mebibytes(kib: float) -> str:
    return f"{kib / 1024:.1f} MB"


def mini_agent_command() -> str:
    """The installed console script next to this interpreter (the venv's), else the one on PATH."""
    beside = Path(sys.executable).parent / "mini-agent"
    if beside.exists():
        return str(beside)
    found = shutil.which("mini-agent")
    if found is None:
        raise RuntimeError("the mini-agent command is not installed (pip install -e .)")
    return found


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without any model settings, with a throwaway HOME, plus `extra`.

    Bytecode is cached as on a normal install (a wheel ships compiled modules; a checkout gets __pycache__),
    even where PYTHONDONTWRITEBYTECODE is set: otherwise every start would recompile mini_agent's sources.
    The cache lives in PYCACHE (PYTHONPYCACHEPREFIX), so nothing is written into the source tree.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    if PYCACHE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env.update({"HOME": str(home), "NO_COLOR": "1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    # The other measures are of the normal path: no warm server (benchmarks/_warm.py measures that one).
    env["MINI_AGENT_NO_SERVER"] = "1"
    env.update(extra)
    return env


def bench_settings(api_url: str, cwd: Path, max_steps: int, **overrides):
    """Settings for an in-process agent against the loopback model: auto mode, no retries."""
    from mini_agent.settings import Settings

    return Settings(
        base_url=api_url,
        api_key="dummy",
        model="claude-test",
        permission_mode="auto",
        max_retries=0,
        request_timeout=30.0,
        max_steps=max_steps,
        cwd=cwd,
        **overrides,
    )
