"""Hooks in the REPL, in a real pseudo-terminal: the trust question for a project's hooks, a prompt a hook stops
(the session goes on), and a call a PreToolUse hook blocks before anyone is asked to approve it."""

from __future__ import annotations

import io
import json

from support.fake_api import answer, tool_use
from support.hooks import hook
from support.repl import finish, spawn

PROMPT = "›"


def project_with_hooks(tmp_path, text: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".mini-agent").mkdir()
    (tmp_path / ".mini-agent" / "config.toml").write_text(text)


def test_trusted_project_hooks_run_and_a_stopped_prompt_leaves_the_session_going(api, tmp_path):
    stop_secrets = "grep -q password && { echo 'no passwords, please' >&2; exit 2; }; exit 0"
    guard = "echo 'bash is off limits in this repo' >&2; exit 2"
    project_with_hooks(tmp_path, hook("UserPromptSubmit", stop_secrets) + hook("PreToolUse", guard, "Bash"))
    api.script(answer(tool_use("bash", {"command": "touch ran"})), answer("Understood, no bash."))
    child = spawn(api, tmp_path)  # default mode: bash would need an approval
    child.logfile_read = screen = io.StringIO()
    child.expect("defines hooks")
    child.expect(r"Trust and run them\?")
    child.sendline("y")
    child.expect(PROMPT)
    child.sendline("my password is hunter2")
    child.expect("no passwords, please")
    child.expect(PROMPT)
    child.sendline("make a file")
    child.expect("Understood, no bash.")  # blocked by the hook: no approval was asked
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    assert "Allow?" not in screen.getvalue() and "approval" not in screen.getvalue()
    assert not (tmp_path / "ran").exists()
    requests = api.message_requests
    assert len(requests) == 2 and "hunter2" not in json.dumps(requests)
    assert "bash is off limits in this repo" in json.dumps(requests[1]["messages"][-1])

    child = spawn(api, tmp_path)  # trusted once: not asked again
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    assert "Trust and run" not in (child.before or "")


def test_declined_project_hooks_do_not_run(api, tmp_path):
    project_with_hooks(tmp_path, hook("UserPromptSubmit", "echo 'the hook ran'"))
    api.script(answer("hello"))
    child = spawn(api, tmp_path)
    child.expect(r"Trust and run them\?")
    child.sendline("n")
    child.expect("do not run: you declined to trust them")
    child.expect(PROMPT)
    child.sendline("hi")
    child.expect("hello")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    assert "the hook ran" not in json.dumps(api.message_requests)
