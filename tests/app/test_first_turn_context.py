"""The first turn's git context, asked while it is typed: the REPL's agent, once built behind the prompt, sets
`git status` going (`ContextKeeper.prefetch`), and the turn takes that answer instead of asking git again.

A one-shot run does not: started before the SDK's import, the git thread's work (spawning, the sandbox's setup)
competed with the import for the interpreter, and the run's first request left no sooner (measured, in pairs)."""

from __future__ import annotations

import json
import subprocess

from support.fake_api import answer

import mini_agent.context.sources as sources


def repository(path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(path)], check=True)


def recording_git(monkeypatch, seen: list):
    real = sources.git_state

    def git_state(inp):
        seen.append(("git asked", inp.text))
        return real(inp)

    monkeypatch.setattr(sources, "git_state", git_state)


def test_the_repl_asks_git_while_the_first_line_is_typed(run_cli, api, tmp_path, monkeypatch):
    repository(tmp_path)
    seen: list = []
    recording_git(monkeypatch, seen)
    api.script(answer("Hello."))
    done = run_cli([], api, typed=["hi"])
    assert done.returncode == 0, done.stderr.decode()
    assert seen == [("git asked", "")]  # asked once, before the turn: the turn took that answer
    assert "Branch: trunk (no commits yet)" in json.dumps(api.message_requests[0]["messages"][0]["content"])
