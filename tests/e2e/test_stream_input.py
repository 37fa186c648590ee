"""--input-format stream-json through a real pipe: the installed command reads each message as it comes and
answers it before the next is written (a program's long-lived session), then ends at end of input."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading

from support import BIN, PATIENCE, TEST_KEY, alive, eventually, process_running
from support.fake_api import answer, tool_use
from support.shared_server import warm_env


def user(text: str) -> bytes:
    return (json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n").encode()


def session(api, tmp_path, *args: str, warm: bool = False) -> tuple[subprocess.Popen, queue.Queue]:
    """The installed command in a stream-json session on pipes, and its stdout's records as they come; `warm`:
    handed to the test process's warm server, pipes and all (support/shared_server.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=TEST_KEY, ANTHROPIC_MODEL="claude-test")
    env.update(MINI_AGENT_NO_SERVER="1", MINI_AGENT_HOME=str(tmp_path / "home"))
    if warm:
        env = warm_env(env)
    argv = [str(BIN), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", *args]
    process = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(json.loads(line)) for line in process.stdout], daemon=True).start()
    return process, lines


def next_result(lines: queue.Queue) -> dict:
    while True:
        record = lines.get(timeout=PATIENCE)  # a result that never comes fails here, not by hanging
        if record["type"] == "result":
            return record


def test_two_turns_through_a_pipe_each_answered_before_the_next_is_written(api, tmp_path):
    api.script(answer("First answer."), answer("Second answer."))
    process, lines = session(api, tmp_path, warm=True)
    try:
        process.stdin.write(user("first question"))
        process.stdin.flush()
        first = next_result(lines)
        # stdin is still open and the second message not yet written: the first turn was answered from one line
        assert first["result"] == "First answer." and len(api.message_requests) == 1
        process.stdin.write(user("second question"))
        process.stdin.flush()
        second = next_result(lines)
        assert second["result"] == "Second answer." and second["session_id"] == first["session_id"]
        process.stdin.close()
        assert process.wait(timeout=PATIENCE) == 0, process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "first question" in json.dumps(api.message_requests[1]["messages"])


def test_ctrl_c_stops_the_turn_and_the_session_as_it_does_a_p_run(api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "exec sleep 61.5151"})))
    process, lines = session(api, tmp_path, "--yes")  # cold: a signal to the agent's own process
    try:
        process.stdin.write(user("wait"))
        process.stdin.flush()
        running = eventually(lambda: process_running("sleep", "61.5151"), "the command starting")
        process.send_signal(signal.SIGINT)
        ended = next_result(lines)
        assert ended["outcome"] == "interrupted" and ended["exit_code"] == 130
        assert process.wait(timeout=PATIENCE) == 130  # with stdin still open: the session is over
        eventually(lambda: not alive(running), "the command ending")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
