"""The installed command in a real pseudo-terminal (pexpect), against the loopback model."""

from __future__ import annotations

import os

import pexpect

from support import BIN, PATIENCE, TEST_KEY

SPAWNED: list[pexpect.spawn] = []
"""Every REPL started by the running test; `close_spawned` ends those still running when the test ends (a failed
assertion would otherwise leave the child, and its warm-up threads, running for the rest of the session)."""


def spawn(api, cwd, *args: str) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(
        ANTHROPIC_BASE_URL=api.url,
        ANTHROPIC_API_KEY=TEST_KEY,
        ANTHROPIC_MODEL="claude-test",
        NO_COLOR="1",
        TERM="xterm",
        MINI_AGENT_RETRY_BASE_DELAY="0.01",
        MINI_AGENT_HOME=str(cwd / "mini-agent-home"),
        MINI_AGENT_NO_SERVER="1",
    )
    # Ctrl-C makes the terminal flush its output queue, which can cut a character the REPL was writing (the
    # spinner's) in half: read what is left of it as U+FFFD rather than fail the test on a decoding error.
    child = pexpect.spawn(
        str(BIN),
        list(args),
        cwd=str(cwd),
        env=env,
        dimensions=(40, 120),
        timeout=PATIENCE,
        encoding="utf-8",
        codec_errors="replace",
    )
    SPAWNED.append(child)
    return child


def close_spawned() -> None:
    """Kill every REPL the test started that is still running (SIGHUP, then SIGKILL: `close(force=True)`)."""
    while SPAWNED:
        child = SPAWNED.pop()
        if child.isalive():
            child.close(force=True)


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus
