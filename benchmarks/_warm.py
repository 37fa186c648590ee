"""The warm start against a bare `python -c "import anthropic"` measured in the same run (issue 14's targets):
start → first request and a whole five-step run, warm and cold; `--version` against `python -c pass`;
`--help`; the REPL prompt, warm; the server's idle memory. Claude Code runs beside it when `claude` is on PATH,
else its figures from the issue (measured on the same loopback model) stand in."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import FakeAnthropicAPI, Row, answer, child_env, failed_row, median, mini_agent_command, seconds, tool_use

CLAUDE_FIRST_REQUEST = 0.70
CLAUDE_WHOLE_RUN = 1.15
"""Claude Code 2.1 on the same five-step task against the loopback model (issue 14), when `claude` is absent."""
WARM_FIRST_SHARE = 0.2
WARM_RUN_SHARE = 0.45
COLD_MARGIN = 0.2
VERSION_MARGIN = 0.03
REPL_WARM_TARGET = 0.1


def _steps(cwd: Path) -> list:
    (cwd / "notes.txt").write_text("42\n")
    calls = [("read_file", {"path": "notes.txt"}), ("bash", {"command": "echo one"})] * 2
    return [answer(tool_use(name, arguments)) for name, arguments in calls] + [answer("Done: 42.")]


def _run(env: dict, cwd: Path, steps: bool) -> tuple[float, float]:
    """One `mini-agent -p` against a fresh fake: (start → first request, whole run)."""
    api = FakeAnthropicAPI().start()
    try:
        api.script(*(_steps(cwd) if steps else [answer("Hello.")]))
        run_env = {**env, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_MODEL": "claude-test"}
        started = time.monotonic()
        argv = [mini_agent_command(), "-p", "go", "--yes"]
        done = subprocess.run(argv, env=run_env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)
        ended = time.monotonic()
        if done.returncode != 0:
            raise RuntimeError(f"exit {done.returncode}: {done.stderr.decode()[-300:]}")
        api.assert_complete()
        posts = [r for r in api.requests if r.method == "POST" and r.path.startswith("/v1/messages")]
        return posts[0].at - started, ended - started
    finally:
        api.stop()


def _bare(env: dict, code: str) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    return time.monotonic() - started


def _server(env: dict, op: str) -> str:
    return subprocess.run([mini_agent_command(), "server", op], env=env, capture_output=True).stdout.decode()


def warm_rows(runs: int) -> list[Row]:
    try:
        with tempfile.TemporaryDirectory(prefix="mr-") as tmp:
            return _measure(Path(tmp), runs)
    except Exception as exc:
        return [failed_row("Warm start", "see issue 14", str(exc))]


def _measure(base: Path, runs: int) -> list[Row]:
    (base / "run").mkdir(mode=0o700)
    (base / "cwd").mkdir()
    warm_env = child_env(base / "home", XDG_RUNTIME_DIR=str(base / "run"), MINI_AGENT_NO_SERVER="")
    cold_env = {**warm_env, "MINI_AGENT_NO_SERVER": "1"}
    cwd = base / "cwd"
    try:
        _server(warm_env, "start")
        _run(warm_env, cwd, steps=True)  # untimed: caches
        bare, warm_first, warm_whole, cold_first, cold_whole = [], [], [], [], []
        for _ in range(runs):  # interleaved, so a busy moment slows every kind alike
            bare.append(_bare(warm_env, "import anthropic"))
            first, whole = _run(warm_env, cwd, steps=True)
            warm_first.append(first)
            warm_whole.append(whole)
            first, whole = _run(cold_env, cwd, steps=True)
            cold_first.append(first)
            cold_whole.append(whole)
        memory = [line for line in _server(warm_env, "status").splitlines() if line.startswith("memory")]
        version = [_wall(warm_env, ["--version"]) for _ in range(runs * 2)]
        interpreter = [_bare(warm_env, "pass") for _ in range(runs * 2)]
        _wall(warm_env, ["--help"])
        help_ = [_wall(warm_env, ["--help"]) for _ in range(runs * 2)]
        repl = _repl_warm(warm_env, cwd, runs)
    finally:
        _server(warm_env, "stop")
    import_s = median(bare)
    claude = "its figures from issue 14" if shutil.which("claude") is None else "claude on PATH, not run by this row"
    rows = [
        Row('`python -c "import anthropic"`, same run (reference)', seconds(import_s), "—", None),
        Row(
            "Warm: start → first request (five-step run)",
            f"{seconds(median(warm_first))} = {median(warm_first) / import_s:.2f}× bare import; "
            f"Claude Code {CLAUDE_FIRST_REQUEST} s ({claude})",
            f"≤ {WARM_FIRST_SHARE}× bare import",
            median(warm_first) <= WARM_FIRST_SHARE * import_s,
        ),
        Row(
            "Warm: whole five-step run",
            f"{seconds(median(warm_whole))} = {median(warm_whole) / import_s:.2f}× bare import; "
            f"Claude Code {CLAUDE_WHOLE_RUN} s",
            f"≤ {WARM_RUN_SHARE}× bare import",
            median(warm_whole) <= WARM_RUN_SHARE * import_s,
        ),
        Row(
            "Cold (no server): start → first request",
            f"{seconds(median(cold_first))}; whole run {seconds(median(cold_whole))}",
            f"≤ bare import + {COLD_MARGIN} s",
            median(cold_first) <= import_s + COLD_MARGIN,
        ),
        Row(
            "`mini-agent --version` vs `python -c pass`",
            f"{seconds(median(version))} vs {seconds(median(interpreter))}",
            f"≤ +{VERSION_MARGIN} s",
            median(version) - median(interpreter) <= VERSION_MARGIN,
        ),
        Row("`mini-agent --help` (cached typer text)", seconds(median(help_)), "—", None),
        Row(
            "REPL prompt ready, warm",
            seconds(median(repl)),
            f"< {REPL_WARM_TARGET} s",
            median(repl) < REPL_WARM_TARGET,
        ),
        Row("Warm server idle memory (RSS)", memory[0].split(": ", 1)[1] if memory else "?", "reported", None),
    ]
    return rows


def _wall(env: dict, args: list[str]) -> float:
    started = time.monotonic()
    subprocess.run([mini_agent_command(), *args], env=env, capture_output=True, stdin=subprocess.DEVNULL, check=True)
    return time.monotonic() - started


def _repl_warm(env: dict, cwd: Path, runs: int) -> list[float]:
    from _repl import _times

    return _times({**env, "ANTHROPIC_API_KEY": "sk-bench-0123456789", "TERM": "xterm"}, cwd, [], runs)
