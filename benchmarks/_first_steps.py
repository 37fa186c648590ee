"""The first steps of a fresh `mini-agent -p` process, each on its own: whatever loads lazily shows up here.

Four trivial steps (bash, read_file, edit_file, bash) against the loopback model, at an empty history and at
~150k tokens of history (a stored session resumed with --continue). A step's gap runs from the fake having
written the reply that called the tool to the next request reaching it: the tool and everything the agent does
around it. The fake answers like a model: TTFT seconds before the first byte, then events STREAM_PACE apart.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from _common import FakeAnthropicAPI, Row, answer, child_env, failed_row, median, millis, mini_agent_command, tool_use

SUM_TARGET = 0.2
"""Seconds for the four gaps together (issue 14: ≤ 0.6× what the reference agent takes)."""
FIRST_BASH_MARGIN = 0.03
"""The first bash step may cost this much more than the second: it must not pay for loading anything."""
TTFT = 0.3
"""Seconds before a reply's first byte: a real model's time to first token is longer still."""
STREAM_PACE = 0.02
HISTORY_TOKENS = 150_000
STEPS = ("bash", "read_file", "edit_file", "bash")


def _script(api: FakeAnthropicAPI) -> None:
    replies = [
        answer(tool_use("bash", {"command": "echo one"})),
        answer(tool_use("read_file", {"path": "notes.txt"})),
        answer(tool_use("edit_file", {"path": "notes.txt", "old_string": "beta", "new_string": "gamma"})),
        answer(tool_use("bash", {"command": "echo two"})),
        answer("Done."),
    ]
    for reply in replies:
        reply.delay, reply.event_delay = TTFT, STREAM_PACE
    api.script(*replies)


def _store_history(env: dict[str, str], cwd: Path, tokens: int) -> None:
    """A session of ~`tokens` tokens (alternating ~2,000-character messages) for --continue to resume."""
    from _steps import history

    from mini_agent.conversation import Session
    from mini_agent.sessions import SessionStore
    from mini_agent.settings import default_data_dir

    writer = SessionStore(default_data_dir(env)).create(cwd.resolve(), "claude-test")
    session = Session()
    session.attach(writer.write)
    messages = history(tokens)
    for user, reply in zip(messages[::2], messages[1::2], strict=True):
        session.begin_turn(user["content"][0]["text"])
        session.append(reply)
    writer.close()


def _run(command: str, tokens: int) -> list[float]:
    api = FakeAnthropicAPI().start()
    try:
        _script(api)
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-") as tmp:
            cwd = Path(tmp) / "project"
            cwd.mkdir()
            (cwd / "notes.txt").write_text("alpha\nbeta\n")
            env = child_env(
                Path(tmp), ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="dummy", ANTHROPIC_MODEL="claude-test"
            )
            args = [command, "-p", "Run the four steps.", "-y"]
            if tokens:
                _store_history(env, cwd, tokens)
                args.append("--continue")
            done = subprocess.run(args, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        posts = [r for r in api.requests if r.method == "POST" and r.path.startswith("/v1/messages")]
        if done.returncode != 0 or len(posts) != len(STEPS) + 1:
            raise RuntimeError(f"exited {done.returncode}, {len(posts)} requests: {done.stderr.decode()[-300:]}")
        api.assert_complete()
        return [posts[i + 1].at - posts[i].answered_at for i in range(len(STEPS))]
    finally:
        api.stop()


def first_steps(runs: int) -> list[Row]:
    rows = []
    target = f"sum < {SUM_TARGET} s; first bash ≤ second + {FIRST_BASH_MARGIN * 1000:.0f} ms"
    for label, tokens in (("~0", 0), ("~150k", HISTORY_TOKENS)):
        name = f"Four trivial steps of a fresh `-p` run, {label} token history"
        try:
            command = mini_agent_command()
            _run(command, tokens)  # untimed: page cache, bytecode cache
            samples = [_run(command, tokens) for _ in range(runs)]
        except Exception as exc:
            rows.append(failed_row(name, target, f"{type(exc).__name__}: {exc}"))
            continue
        steps = [median([sample[i] for sample in samples]) for i in range(len(STEPS))]
        total = median([sum(sample) for sample in samples])
        detail = " · ".join(f"{step} {millis(value)}" for step, value in zip(STEPS, steps, strict=True))
        passed = total < SUM_TARGET and steps[0] <= steps[3] + FIRST_BASH_MARGIN
        rows.append(Row(name, f"{detail}; sum {millis(total)}", target, passed))
    return rows
