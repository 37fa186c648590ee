"""Time from launching the interactive REPL until its prompt is ready for typing, in a real pseudo-terminal.

Also with --continue of a 200-message session, which must not delay the prompt either; and, for reference, a
bare interpreter importing the three libraries the prompt cannot be drawn without (prompt-toolkit, which draws
it; typer, which reads the command line; rich, which prints the banner), run between the launches: the floor
under the first row on this machine at that moment.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Row, child_env, failed_row, median, mini_agent_command, seconds

PROMPT_TARGET = 0.35
CURSOR_QUERY = "\x1b[6n"
CURSOR_ANSWER = "\x1b[1;1R"
PROMPT = "\x1b\\[\\?2004h[^\r\n]*›"
"""The prompt as prompt-toolkit draws it for input (bracketed paste on), not a `›` of --continue's recap."""
SESSION_TURNS = 100
LIBRARIES = "import prompt_toolkit.shortcuts, typer, rich.console"


def prompt_rows(runs: int) -> list[Row]:
    try:
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-repl-") as tmp:
            base = Path(tmp)
            fresh, resumed = base / "project", base / "resumed"
            fresh.mkdir()
            resumed.mkdir()
            env = child_env(
                base / "home",
                ANTHROPIC_API_KEY="sk-bench-0123456789",
                MINI_AGENT_HOME=str(base / "agent-home"),
                TERM="xterm",
            )
            _store_session(base / "agent-home", resumed)
            floor: list[float] = []
            launches = [(env, fresh, []), (env, resumed, ["--continue"])]
            times = interleaved(launches, runs, between=lambda: floor.append(_libraries(env, base)))
    except Exception as exc:
        return [failed_row("REPL prompt ready", f"< {seconds(PROMPT_TARGET)}", str(exc))]
    return [
        _row("REPL prompt ready after launch", times[0]),
        _row(f"REPL prompt ready with --continue ({SESSION_TURNS * 2}-message session)", times[1]),
        Row(f'`python -c "{LIBRARIES}"` (reference: the libraries alone)', seconds(median(floor[1:])), "—", None),
    ]


def _libraries(env: dict[str, str], base: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", LIBRARIES], env=env, cwd=base, check=True, capture_output=True)
    return time.perf_counter() - started


def _row(name: str, times: list[float]) -> Row:
    typical = median(times)
    return Row(
        name, f"{seconds(typical)} (max {seconds(max(times))})", f"< {seconds(PROMPT_TARGET)}", typical < PROMPT_TARGET
    )


def interleaved(launches: list[tuple[dict[str, str], Path, list[str]]], runs: int, between=None) -> list[list[float]]:
    """Launch to prompt of each (environment, directory, arguments), in turn, `runs` rounds after one untimed
    round (it warms the page and bytecode caches): the series see the same moments of a machine whose speed
    drifts. `between` is called after each round, the untimed one too, so that what it measures interleaves."""
    times: list[list[float]] = [[] for _ in launches]
    for _ in range(runs + 1):
        for series, (env, cwd, args) in zip(times, launches, strict=True):
            series.append(_launch(env, cwd, args))
        if between is not None:
            between()
    return [series[1:] for series in times]


def _times(env: dict[str, str], cwd: Path, args: list[str], runs: int, between=None) -> list[float]:
    return interleaved([(env, cwd, args)], runs, between)[0]


def _launch(env: dict[str, str], cwd: Path, args: list[str]) -> float:
    """Seconds from the launch to the prompt drawn for input; then Ctrl-D, answering the terminal's queries as a
    terminal does (unanswered, prompt-toolkit waits 1 s for each before it exits)."""
    import pexpect

    started = time.perf_counter()
    child = pexpect.spawn(
        mini_agent_command(), args, env=env, cwd=str(cwd), dimensions=(40, 120), encoding="utf-8", timeout=20
    )
    child.delaybeforesend = None  # pexpect sleeps 50 ms before each send by default; a terminal answers at once
    child.expect_exact(CURSOR_QUERY)  # asked just before the prompt is drawn; a real terminal answers it
    child.send(CURSOR_ANSWER)
    child.expect(PROMPT)
    elapsed = time.perf_counter() - started
    child.sendcontrol("d")
    while child.expect_exact([CURSOR_QUERY, pexpect.EOF]) == 0:
        child.send(CURSOR_ANSWER)
    child.close()
    return elapsed


def _store_session(data_dir: Path, cwd: Path) -> None:
    """A session file of SESSION_TURNS question-and-answer turns, written by the real store."""
    from mini_agent.conversation import Session
    from mini_agent.sessions import SessionStore

    writer = SessionStore(data_dir).create(cwd.resolve(), "claude-test")
    session = Session()
    session.attach(writer.write)
    for turn in range(SESSION_TURNS):
        session.begin_turn(f"question {turn}: " + "words " * 40)
        session.append({"role": "assistant", "content": [{"type": "text", "text": "answer " * 120}]})
    writer.close()
