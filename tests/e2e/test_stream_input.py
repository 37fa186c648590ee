"""--input-format stream-json through a real pipe: the installed command reads each message as it comes and
answers it before the next is written (a program's long-lived session), then ends at end of input."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading

from support import BIN, PATIENCE, TEST_KEY
from support.fake_api import answer


def user(text: str) -> bytes:
    return (json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n").encode()


def test_two_turns_through_a_pipe_each_answered_before_the_next_is_written(api, tmp_path):
    api.script(answer("First answer."), answer("Second answer."))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY=TEST_KEY, ANTHROPIC_MODEL="claude-test")
    env.update(MINI_AGENT_NO_SERVER="1", MINI_AGENT_HOME=str(tmp_path / "home"))
    argv = [str(BIN), "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    process = subprocess.Popen(
        argv, cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(json.loads(line)) for line in process.stdout], daemon=True).start()

    def next_result() -> dict:
        while True:
            record = lines.get(timeout=PATIENCE)  # a result that never comes fails here, not by hanging
            if record["type"] == "result":
                return record

    try:
        process.stdin.write(user("first question"))
        process.stdin.flush()
        first = next_result()
        # stdin is still open and the second message not yet written: the first turn was answered from one line
        assert first["result"] == "First answer." and len(api.message_requests) == 1
        process.stdin.write(user("second question"))
        process.stdin.flush()
        second = next_result()
        assert second["result"] == "Second answer." and second["session_id"] == first["session_id"]
        process.stdin.close()
        assert process.wait(timeout=PATIENCE) == 0, process.stderr.read().decode()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "first question" in json.dumps(api.message_requests[1]["messages"])
