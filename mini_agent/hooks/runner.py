"""Running one hook: `/bin/sh -c command` in the project directory, the event as JSON on stdin, in a process
group of its own (killed whole at its time limit or on Ctrl-C), its output kept to a bounded size."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mini_agent import threads
from mini_agent.hooks.definitions import HookDef
from mini_agent.processes.tree import kill_group

OUTPUT_LIMIT = 64 * 1024
"""Bytes of stdout and of stderr kept; a hook that prints more is cut (and said to be)."""


@dataclass(frozen=True)
class HookRun:
    hook: HookDef
    exit_code: int | None
    """None: it did not finish (timed out, or could not start: see `error`)."""
    stdout: str
    stderr: str
    seconds: float
    error: str | None = None


def run_hook(hook: HookDef, payload: dict, cwd: Path, environment: dict[str, str] | None = None) -> HookRun:
    """`environment`: what the hook inherits (by default ours; the session passes it without the model key)."""
    started = time.monotonic()
    base = os.environ if environment is None else environment
    env = {**base, "MINI_AGENT_PROJECT_DIR": str(cwd), "CLAUDE_PROJECT_DIR": str(cwd)}
    data = (json.dumps(payload, ensure_ascii=False) + "\n").encode()  # one line, as line-reading tools expect
    # Output goes to files, not pipes: a hook that prints without end fills a disk page, not our memory, and a
    # hook that never reads its stdin cannot block us on a full pipe (communicate writes with the time limit).
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(
                ["/bin/sh", "-c", hook.command],
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                cwd=cwd,
                env=env,
                start_new_session=True,  # its children die with it, and the terminal's Ctrl-C is ours to pass on
                preexec_fn=threads.child_preexec(),  # run from a background thread, it still takes every signal
            )
        except OSError as exc:
            return HookRun(hook, None, "", "", time.monotonic() - started, f"could not start: {exc}")
        error = None
        try:
            process.communicate(data, timeout=hook.timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            error = f"timed out after {hook.timeout:g} s"
        except BaseException:  # Ctrl-C: the hook goes with the interrupted turn
            _kill(process)
            raise
        return HookRun(
            hook,
            None if error else process.returncode,
            _read(out),
            _read(err),
            time.monotonic() - started,
            error,
        )


def _kill(process: subprocess.Popen) -> None:
    kill_group(process, grace=0)
    process.wait()


def _read(stream) -> str:
    stream.seek(0)
    data = stream.read(OUTPUT_LIMIT + 1)
    text = data[:OUTPUT_LIMIT].decode("utf-8", errors="replace")
    return text + "\n[… cut]" if len(data) > OUTPUT_LIMIT else text
