"""The installed command in a real pseudo-terminal (pexpect), against the loopback model: through the test
process's warm server (support/shared_server.py) unless the test's subject is the process itself (`cold=True`)."""

from __future__ import annotations

import os

import pexpect

from support import BIN, PATIENCE, TEST_KEY
from support.shared_server import warm_env

SPAWNED: list[pexpect.spawn] = []
"""Every REPL started by the running test; `close_spawned` ends those still running when the test ends (a failed
assertion would otherwise leave the child, and its warm-up threads, running for the rest of the session)."""


def spawn(api, cwd, *args: str, cold: bool = False) -> pexpect.spawn:
    """`mini-agent ARGS` in a 40x120 terminal in `cwd` (its home `cwd/mini-agent-home`). Handed to the warm server
    as a user's terminal run is, unless `cold`: for a test of the process itself (killed, signalled, confined,
    its start-up), where `child.pid` must be the agent and not the client that handed the run over."""
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
    if not cold:
        env = warm_env(env)
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
