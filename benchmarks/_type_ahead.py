"""A task typed at the REPL's first prompt, cold: how long after Enter its request leaves.

The prompt is drawn before the agent exists (app/agent_build.py builds it behind the prompt, then the model SDK
is imported); a task sent at once waits for what its request needs. Measured in a real pseudo-terminal against
the loopback model: from the moment Enter is written to the terminal to the fake's `.at` of the first
POST /v1/messages. Once with Enter pressed the moment the prompt shows (a pasted task), once after TYPING seconds
(a short task typed by hand), which the work behind the prompt overlaps.
"""

from __future__ import annotations

import resource
import tempfile
import time
from pathlib import Path

from _common import FakeAnthropicAPI, Row, answer, child_env, failed_row, median, mini_agent_command, seconds

CURSOR_QUERY = "\x1b[6n"
CURSOR_ANSWER = "\x1b[1;1R"
PROMPT_END = "›"
PROMPT = "\x1b\\[\\?2004h[^\r\n]*›"
TASK = "say hello"
TYPING = 2.0
"""Seconds from the prompt to Enter for a human typing TASK's ~10 characters at ~5 a second."""
ANSWER = "Hello from the benchmark."


def type_ahead_rows(runs: int) -> list[Row]:
    name = "REPL: task sent at the first prompt (cold) → its request leaves"
    try:
        command = mini_agent_command()
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-typeahead-") as tmp:
            base = Path(tmp)
            (base / "project").mkdir()
            _run(command, base, 0.0)  # untimed: page cache, bytecode cache
            at_once, typed = [], []
            for _ in range(runs):  # interleaved, so a busy machine slows both alike
                at_once.append(_run(command, base, 0.0))
                typed.append(_run(command, base, TYPING))
    except Exception as exc:
        return [failed_row(name, "—", str(exc))]
    typed_name = f"REPL: task typed for {TYPING:g} s at the first prompt (cold) → its request leaves"
    return [Row(name, _result(at_once), "—", None), Row(typed_name, _result(typed), "—", None)]


def _answering(child, text: str | None, timeout: float) -> None:
    """Wait for `text` (None: for `timeout` seconds), answering each cursor-position query meanwhile, as a
    terminal does. Unanswered, a query the prompt asks while the task is typed (it redraws when the agent's build
    ends) holds the Enter for prompt-toolkit's 1 s wait for answers: the measure would be that second, not ours."""
    import pexpect

    deadline = time.monotonic() + timeout
    while True:
        remaining = max(0.0, deadline - time.monotonic())
        index = child.expect_exact([CURSOR_QUERY, text if text is not None else pexpect.TIMEOUT], timeout=remaining)
        if index == 0:
            child.send(CURSOR_ANSWER)
            continue
        return


def _result(samples: list[tuple[float, float]]) -> str:
    waits, cpus = [s[0] for s in samples], [s[1] for s in samples]
    return f"{seconds(median(waits))} after Enter (max {seconds(max(waits))}); whole run {seconds(median(cpus))} CPU"


def _run(command: str, base: Path, typing: float) -> tuple[float, float]:
    """One REPL: the prompt, TASK and Enter after `typing` seconds, the answer, Ctrl-D. Returns (Enter -> the
    request at the fake, the child's CPU time over the whole run)."""
    import pexpect

    api = FakeAnthropicAPI().start()
    try:
        api.script(answer(ANSWER))
        env = child_env(
            base / "home",
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY="sk-bench-0123456789",
            ANTHROPIC_MODEL="claude-test",
            MINI_AGENT_HOME=str(base / "agent-home"),
            TERM="xterm",
        )
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        child = pexpect.spawn(
            command, [], env=env, cwd=str(base / "project"), dimensions=(40, 120), encoding="utf-8", timeout=30
        )
        child.delaybeforesend = None
        child.expect_exact(CURSOR_QUERY)
        child.send(CURSOR_ANSWER)
        child.expect(PROMPT)
        child.send(TASK)
        if typing:
            _answering(child, None, typing)  # the human, typing, while the terminal answers its queries
        entered = time.monotonic()
        child.send("\r")
        _answering(child, ANSWER, 30)
        _answering(child, PROMPT_END, 30)  # the next prompt: Ctrl-D there ends the session
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
        child.close()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        posts = [r for r in api.requests if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"]
        if not posts:
            raise RuntimeError("the REPL sent no request")
        api.assert_complete()
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        return posts[0].at - entered, cpu
    finally:
        api.stop()
