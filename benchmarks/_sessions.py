"""Sessions on disk: listing a project's sessions, loading one to resume it, and what a written line costs."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from _common import Row, failed_row, median, millis

from mini_agent.context.blocks import P0, P1, ContextBlock
from mini_agent.conversation import Session
from mini_agent.sessions import SessionStore
from mini_agent.usage import Usage

LIST_TARGET = 0.1
LOAD_TARGET = 0.2
SESSIONS = 200
TURNS_PER_SESSION = 5
"""Twenty messages a turn: ~100 messages a session."""
BIG_SESSION_TURNS = 100
"""~2,000 messages."""
STEPS_PER_TURN = 9
RESULT_CHARS = 1_500
APPENDS = 200


def session_rows(runs: int) -> list[Row]:
    with tempfile.TemporaryDirectory(prefix="mini-agent-bench-sessions-") as tmp:
        root = Path(tmp)
        store = SessionStore(root / "data", secrets=("sk-ant-bench-0123456789",))
        return [_listing(store, root / "project", runs), _loading(store, root / "big", runs), _appending(root)]


def _listing(store: SessionStore, cwd: Path, runs: int) -> Row:
    name = f"List {SESSIONS} sessions of ~{TURNS_PER_SESSION * 20} messages"
    target = f"< {millis(LIST_TARGET)}"
    for number in range(SESSIONS):
        _write(store, cwd, TURNS_PER_SESSION, seed=number)
    store.list(cwd)  # imports and the first directory read, untimed
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        listed = store.list(cwd)
        times.append(time.perf_counter() - started)
    if len(listed) != SESSIONS or not all(info.first_prompt and info.messages > 90 for info in listed):
        return failed_row(name, target, f"listed {len(listed)} sessions, some without prompt or count")
    megabytes = sum(info.bytes for info in listed) / 1e6
    result = f"{millis(median(times))} ({megabytes:.1f} MB of session files, in the page cache)"
    return Row(name, result, target, median(times) < LIST_TARGET)


def _loading(store: SessionStore, cwd: Path, runs: int) -> Row:
    expected = _write(store, cwd, BIG_SESSION_TURNS, seed=0)
    info = store.latest(cwd)
    name = f"Load + restore a {len(expected.messages):,}-message session"
    target = f"< {millis(LOAD_TARGET)}"
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        restored = store.load(info, cwd).restore()
        times.append(time.perf_counter() - started)
    if restored.messages != expected.messages or restored.usage != expected.usage:
        return failed_row(name, target, "the restored session differs from the one written")
    result = f"{millis(median(times))} ({info.bytes / 1e6:.1f} MB, {len(expected.log):,} log entries)"
    return Row(name, result, target, median(times) < LOAD_TARGET)


def _appending(root: Path) -> Row:
    """One entry per write as the session does it, then the same with an fsync after each: why fsync waits."""
    store = SessionStore(root / "append")
    entry = {"type": "message", "message": _result_message(0, 0)}
    costs = []
    for sync in (False, True):
        with store.create(root, "claude-test") as writer:
            started = time.perf_counter()
            for _ in range(APPENDS):
                writer.write(entry)
                if sync:
                    writer.sync()
            costs.append((time.perf_counter() - started) / APPENDS)
    written, synced = costs
    result = f"{written * 1e6:.0f} µs per entry written; {millis(synced)} with an fsync after each"
    return Row("Append one ~1.6 KB entry to a session file", result, "— (reported)", None)


def _write(store: SessionStore, cwd: Path, turns: int, seed: int) -> Session:
    """A session the way the agent writes one: context beside each prompt, tool steps with usage, an answer."""
    session = Session()
    with store.create(cwd, "claude-test") as writer:
        session.attach(writer.write)
        for turn in range(turns):
            blocks = [
                ContextBlock("project_instructions", P0, "Run the tests before committing.\n" * 10),
                ContextBlock("environment", P1, f"Working directory: {cwd}\nTime: 10:{turn % 60:02d}"),
                ContextBlock("git_state", P1, f"Branch: main\nChanged:\n M src/module_{seed}_{turn}.py"),
            ]
            session.begin_turn(
                f"Task {seed}.{turn}: fix the failing test in src/module_{seed}_{turn}.py and explain the cause.",
                [{"type": "text", "text": block.render()} for block in blocks],
            )
            for step in range(STEPS_PER_TURN):
                session.record_usage(Usage(1_000 + step, 80, 0, 900))
                call = {"type": "tool_use", "id": f"toolu_{turn}_{step}", "name": "read_file", "input": {"path": "x"}}
                session.append({"role": "assistant", "content": [{"type": "text", "text": "Reading."}, call]})
                session.append(_result_message(turn, step))
            session.record_usage(Usage(2_000, 120))
            session.append({"role": "assistant", "content": [{"type": "text", "text": "Fixed: " + "why " * 60}]})
    return session


def _result_message(turn: int, step: int) -> dict:
    text = "\n".join(f"{line}\tdef f{line}(x): return x + {line}" for line in range(1, RESULT_CHARS // 30))
    result = {"type": "tool_result", "tool_use_id": f"toolu_{turn}_{step}", "content": text}
    return {"role": "user", "content": [result]}
