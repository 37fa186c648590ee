"""Start-up and shut-down of the installed command: --version, --help, the SDK import, a -p run end to end."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import FakeAnthropicAPI, Row, answer, child_env, failed_row, median, mini_agent_command, seconds

VERSION_TARGET = 0.1
HELP_TARGET = 0.3
FIRST_REQUEST_MARGIN = 0.2
EXIT_TARGET = 0.1
STREAM_PACE = 0.02
"""Seconds between the fake's streamed events: a real model's tokens arrive tens of milliseconds apart."""


def _wall(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.monotonic()
    done = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[-2:])} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return elapsed


def _walls(argv: list[str], runs: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-") as tmp:
        env = child_env(Path(tmp))
        _wall(argv, env, Path(tmp))  # one untimed run: the files are in the page cache from now on
        return [_wall(argv, env, Path(tmp)) for _ in range(runs)]


def _command_row(name: str, argv: list[str], target_s: float, runs: int) -> list[Row]:
    target = f"< {target_s} s"
    try:
        value = median(_walls(argv, runs))
    except Exception as exc:
        return [failed_row(name, target, str(exc))]
    return [Row(name, seconds(value), target, value < target_s)]


def version(runs: int) -> list[Row]:
    return _command_row("`mini-agent --version`", [mini_agent_command(), "--version"], VERSION_TARGET, runs)


def help_(runs: int) -> list[Row]:
    return _command_row("`mini-agent --help`", [mini_agent_command(), "--help"], HELP_TARGET, runs)


IMPORT_CODE = "import anthropic, time; print(time.monotonic())"


def _bare_import(env: dict[str, str], cwd: str) -> tuple[float, float]:
    """One `python -c "import anthropic"`: (wall time, time until the import had finished)."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", IMPORT_CODE], env=env, cwd=cwd, capture_output=True, check=True)
    return time.monotonic() - started, float(done.stdout) - started


def import_row(runs: int) -> list[Row]:
    name = '`python -c "import anthropic"` (reference)'
    try:
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-") as tmp:
            env = child_env(Path(tmp))
            _bare_import(env, tmp)  # untimed: page cache, bytecode cache
            samples = [_bare_import(env, tmp) for _ in range(runs)]
        interpreter = median(_walls([sys.executable, "-c", "pass"], runs))
    except Exception as exc:
        return [failed_row(name, "—", str(exc))]
    wall, imported = median([s[0] for s in samples]), median([s[1] for s in samples])
    result = (
        f"{seconds(wall)} wall = import done at {seconds(imported)} + {seconds(wall - imported)} "
        f"interpreter teardown (bare interpreter: {seconds(interpreter)})"
    )
    return [Row(name, result, "—", None)]


def _one_shot(command: str) -> tuple[float, float]:
    """One `mini-agent -p hi` against a fresh fake: (start -> first POST, last answer written -> exit seen)."""
    api = FakeAnthropicAPI().start()
    try:
        reply = answer("Hello from the benchmark.")
        reply.event_delay = STREAM_PACE  # paced like a real model, so the reply's last byte comes last
        api.script(reply)
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-") as tmp:
            env = child_env(
                Path(tmp), ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="dummy", ANTHROPIC_MODEL="claude-test"
            )
            with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
                started = time.monotonic()
                process = subprocess.Popen(
                    [command, "-p", "hi"], env=env, cwd=tmp, stdin=subprocess.DEVNULL, stdout=out, stderr=err
                )
                try:
                    returncode = process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
                    raise RuntimeError("mini-agent -p did not exit within 60 s") from None
                exited = time.monotonic()
                out.seek(0)
                err.seek(0)
                stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        posts = [r for r in api.requests if r.method == "POST" and r.path.startswith("/v1/messages")]
        if returncode != 0 or "Hello from the benchmark." not in stdout or not posts:
            raise RuntimeError(f"mini-agent -p exited {returncode}; stdout {stdout[-200:]!r}; stderr {stderr[-300:]!r}")
        api.assert_complete()
        return posts[0].at - started, exited - posts[-1].answered_at
    finally:
        api.stop()


def one_shot(runs: int) -> list[Row]:
    """Rows 4 and 5, from `runs` pairs of (bare import, `-p` run) taken back to back, so that a busy machine
    slows both sides of a pair alike. Row 4 compares with the time the bare import had *finished*: the bare
    command's wall time adds the interpreter's teardown, which a run has not reached at its first request."""
    first_name, exit_name = "`-p` start → first request", "`-p` last response → exit"
    first_target, exit_target = f"≤ bare import + {FIRST_REQUEST_MARGIN} s", f"< {EXIT_TARGET} s"
    try:
        command = mini_agent_command()
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-") as tmp:
            env = child_env(Path(tmp))
            _one_shot(command)  # untimed: page cache, bytecode cache
            _bare_import(env, tmp)
            pairs = [(_bare_import(env, tmp)[1], _one_shot(command)) for _ in range(runs)]
    except Exception as exc:
        return [failed_row(first_name, first_target, str(exc)), failed_row(exit_name, exit_target, "see above")]
    imported = median([p[0] for p in pairs])
    first = median([p[1][0] for p in pairs])
    over = median([p[1][0] - p[0] for p in pairs])
    last = median([p[1][1] for p in pairs])
    first_row = Row(
        first_name,
        f"{seconds(first)}; bare import done at {seconds(imported)}; difference {over:+.3f} s",
        first_target,
        over <= FIRST_REQUEST_MARGIN,
    )
    return [first_row, Row(exit_name, seconds(last), exit_target, last < EXIT_TARGET)]
