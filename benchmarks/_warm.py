"""The warm start against a bare `python -c "import anthropic"` measured in the same run (issue 14's targets):
start → first request and a whole five-step run, warm and cold; `--version` against `python -c pass`;
`--help`; the REPL prompt, warm; the server's idle memory. Claude Code runs the same five-step task beside it,
interleaved, when `claude` is on PATH (or MINI_AGENT_BENCH_CLAUDE names it); else its figures from the issue
(measured the same way on these machines) stand in."""

from __future__ import annotations

import os
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
GAPS_SHARE = 0.6
GAPS_LIMIT = 0.2


CLAUDE_ENV = {"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
"""Claude Code talks to nothing but the loopback model: no telemetry, no update check."""


def _claude() -> str | None:
    return os.environ.get("MINI_AGENT_BENCH_CLAUDE") or shutil.which("claude")


def _steps(cwd: Path, claude: bool = False) -> list:
    """Read a file, run `echo`, twice each, then answer: in mini-agent's tool names, or in Claude Code's."""
    (cwd / "notes.txt").write_text("42\n")
    if claude:
        calls = [("Read", {"file_path": str(cwd / "notes.txt")}), ("Bash", {"command": "echo one"})] * 2
    else:
        calls = [("read_file", {"path": "notes.txt"}), ("bash", {"command": "echo one"})] * 2
    return [answer(tool_use(name, arguments)) for name, arguments in calls] + [answer("Done: 42.")]


def _run(env: dict, cwd: Path, steps: bool, claude: str | None = None) -> tuple[float, float, float]:
    """One `mini-agent -p` (or, given its path, Claude Code's) against a fresh fake: (start → first request,
    whole run, the sum of the gaps between a reply's end and the next request)."""
    api = FakeAnthropicAPI().start()
    api.validate = claude is None  # the API's rules are checked on mini-agent's requests; Claude Code's are its own
    try:
        api.script(*(_steps(cwd, claude is not None) if steps else [answer("Hello.")]))
        run_env = {**env, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "dummy", "ANTHROPIC_MODEL": "claude-test"}
        started = time.monotonic()
        if claude is None:
            argv = [mini_agent_command(), "-p", "go", "--yes"]
        else:  # not --dangerously-skip-permissions: it refuses to run as root; the two tools are allowed instead
            argv, run_env = [claude, "-p", "go", "--allowedTools", "Read,Bash"], {**run_env, **CLAUDE_ENV}
        done = subprocess.run(argv, env=run_env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)
        ended = time.monotonic()
        if done.returncode != 0:
            raise RuntimeError(f"exit {done.returncode}: {done.stderr.decode()[-300:]}")
        api.assert_complete()
        posts = [r for r in api.requests if r.method == "POST" and r.path.startswith("/v1/messages")]
        gaps = sum(after.at - before.answered_at for before, after in zip(posts, posts[1:], strict=False))
        return posts[0].at - started, ended - started, gaps
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
    claude = _claude()
    try:
        _server(warm_env, "start")
        _run(warm_env, cwd, steps=True)  # untimed: caches
        if claude:
            _run(warm_env, cwd, steps=True, claude=claude)
        bare, warm, cold, beside = [], [], [], []
        for _ in range(runs):  # interleaved, so a busy moment slows every kind alike
            bare.append(_bare(warm_env, "import anthropic"))
            warm.append(_run(warm_env, cwd, steps=True))
            cold.append(_run(cold_env, cwd, steps=True))
            if claude:
                beside.append(_run(warm_env, cwd, steps=True, claude=claude))
        memory = [line for line in _server(warm_env, "status").splitlines() if line.startswith("memory")]
        version = [_wall(warm_env, ["--version"]) for _ in range(runs * 2)]
        interpreter = [_bare(warm_env, "pass") for _ in range(runs * 2)]
        _wall(warm_env, ["--help"])
        help_ = [_wall(warm_env, ["--help"]) for _ in range(runs * 2)]
        repl = _repl_warm(warm_env, cwd, runs)
    finally:
        _server(warm_env, "stop")
    import_s = median(bare)
    warm_first, warm_whole, warm_gaps = (median(column) for column in zip(*warm, strict=True))
    cold_first, cold_whole, cold_gaps = (median(column) for column in zip(*cold, strict=True))
    if claude:
        source = "measured beside it"
        claude_first_s, claude_whole_s, claude_gaps = (median(column) for column in zip(*beside, strict=True))
    else:
        source, claude_first_s, claude_whole_s = "its figures from issue 14", CLAUDE_FIRST_REQUEST, CLAUDE_WHOLE_RUN
        claude_gaps = None
    rows = [
        Row('`python -c "import anthropic"`, same run (reference)', seconds(import_s), "—", None),
        Row(
            "Warm: start → first request (five-step run)",
            f"{seconds(warm_first)} = {warm_first / import_s:.2f}× bare import; "
            f"Claude Code {seconds(claude_first_s)} ({source}): {warm_first / claude_first_s:.2f}× it",
            f"≤ {WARM_FIRST_SHARE}× bare import",
            warm_first <= WARM_FIRST_SHARE * import_s,
        ),
        Row(
            "Warm: whole five-step run",
            f"{seconds(warm_whole)} = {warm_whole / import_s:.2f}× bare import; "
            f"Claude Code {seconds(claude_whole_s)}: {warm_whole / claude_whole_s:.2f}× it",
            f"≤ {WARM_RUN_SHARE}× bare import",
            warm_whole <= WARM_RUN_SHARE * import_s,
        ),
        Row(
            "Cold (no server): start → first request",
            f"{seconds(cold_first)}; whole run {seconds(cold_whole)}; Claude Code {seconds(claude_first_s)}",
            f"≤ bare import + {COLD_MARGIN} s",
            cold_first <= import_s + COLD_MARGIN,
        ),
        _gaps_row(warm_gaps, cold_gaps, claude_gaps),
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


def _gaps_row(warm: float, cold: float, claude: float | None) -> Row:
    """The four step gaps (reply in → next request out) of the five-step run: against Claude Code's measured
    beside them when it is installed (≤ 0.6× it), else against the issue's 0.2 s."""
    name, result = "Step gaps, sum of four (five-step run)", f"warm {warm * 1000:.1f} ms, cold {cold * 1000:.1f} ms"
    if claude is None:
        return Row(name, result, f"≤ {GAPS_LIMIT} s", warm <= GAPS_LIMIT)
    result += f"; Claude Code {claude * 1000:.1f} ms ({warm / claude:.2f}×)"
    return Row(name, result, f"≤ {GAPS_SHARE}× Claude Code's", warm <= GAPS_SHARE * claude)


def _wall(env: dict, args: list[str]) -> float:
    started = time.monotonic()
    subprocess.run([mini_agent_command(), *args], env=env, capture_output=True, stdin=subprocess.DEVNULL, check=True)
    return time.monotonic() - started


def _repl_warm(env: dict, cwd: Path, runs: int) -> list[float]:
    from _repl import _times

    return _times({**env, "ANTHROPIC_API_KEY": "sk-bench-0123456789", "TERM": "xterm"}, cwd, [], runs)
