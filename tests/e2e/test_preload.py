"""What the first step needs is loaded while the first request is out, not inside the step, and not by commands
that never talk to a model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

from support import PATIENCE, TEST_KEY
from support.fake_api import answer, tool_use

from mini_agent.step_preload import Preload

STEP_MODULES = ("mini_agent.safety.shell.classify", "tree_sitter", "tree_sitter_bash")
LOADED_AHEAD = (*STEP_MODULES, "tiktoken", "mini_agent.step_preload")

DRIVER = textwrap.dedent(
    """
    import atexit, gc, json, sys
    from mini_agent import tool_calls
    from mini_agent.model.client import AnthropicProvider

    seen = {}
    sent, plan = AnthropicProvider._sent, tool_calls.ToolCalls._plan

    def watch_sent(self, request):
        seen.setdefault("sent", sorted(sys.modules))
        seen.setdefault("collecting_at_sent", gc.isenabled())
        sent(self, request)

    def watch_plan(self, call):
        seen.setdefault("tool", sorted(sys.modules))
        seen.setdefault("grammar_built", sys.modules["mini_agent.safety.shell.grammar"]._language is not None)
        seen.setdefault("collecting_at_tool", [gc.isenabled(), gc.get_freeze_count()])
        return plan(self, call)

    def dump():
        seen["end"] = sorted(sys.modules)
        with open(OUT, "w") as out:
            json.dump(seen, out)

    AnthropicProvider._sent, tool_calls.ToolCalls._plan = watch_sent, watch_plan
    atexit.register(dump)  # the command ends as the interpreter would, atexit included (process_end.py)
    sys.argv = ["mini-agent", "-p", "run true", "-y"]
    from mini_agent.entry import main  # the installed command's own path

    main()
    """
)


def _environment(tmp_path, api_url: str = "http://127.0.0.1:9") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
    env.update(
        ANTHROPIC_BASE_URL=api_url,
        ANTHROPIC_API_KEY=TEST_KEY,
        ANTHROPIC_MODEL="claude-test",
        MINI_AGENT_HOME=str(tmp_path / "home"),
        NO_COLOR="1",
    )
    return env


def _drive(api, tmp_path) -> dict:
    """A `-p` run in a fresh interpreter: the modules loaded as the first request went out, at the first tool
    call and at the end."""
    out = tmp_path / "seen.json"
    driver = DRIVER.replace("OUT", repr(str(out)))
    done = subprocess.run(
        [sys.executable, "-c", driver],
        env={**_environment(tmp_path, api.url), "MINI_AGENT_NO_SERVER": "1"},
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=PATIENCE,
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(out.read_text())


def test_the_first_tool_call_finds_what_it_needs_loaded_and_start_up_did_not_load_it(api, tmp_path):
    api.script(answer(tool_use("bash", {"command": "true"})), answer("Done."))
    seen = _drive(api, tmp_path)
    before, at_tool = set(seen["sent"]), set(seen["tool"])
    assert not before & set(STEP_MODULES), "loaded before the first request: it would delay that request"
    assert set(STEP_MODULES) <= at_tool
    assert seen["grammar_built"] is True


def test_start_up_runs_without_the_garbage_collector_and_the_first_request_resumes_it(api, tmp_path):
    """The collector walks the heap again and again while the imports fill it (~5 % of a cold start): paused until
    the first request is out, then resumed with start-up's objects frozen, which no collection walks again."""
    api.script(answer(tool_use("bash", {"command": "true"})), answer("Done."))
    seen = _drive(api, tmp_path)
    assert seen["collecting_at_sent"] is False
    enabled, frozen = seen["collecting_at_tool"]
    assert enabled is True
    assert frozen > 10_000, "start-up's modules, classes and functions are frozen"


def test_a_run_that_ends_with_its_first_reply_never_loads_the_tokenizer(api, tmp_path):
    api.script(answer("Nothing to run."))
    seen = _drive(api, tmp_path)
    assert "tiktoken" not in seen["end"], "loading it would only slow the exit of a one-reply run"
    assert "acp" not in seen["end"], "the ACP SDK is for `mini-agent acp` alone"


PROMPT_DRIVER = textwrap.dedent(
    """
    import importlib, json, os, sys

    shortcuts = importlib.import_module("prompt_toolkit.shortcuts.prompt")

    def drawn(self, *args, **kwargs):  # the first prompt: what the REPL has loaded by now, then leave
        with open(OUT, "w") as out:
            json.dump(sorted(sys.modules), out)
        os._exit(0)

    shortcuts.PromptSession.prompt = drawn
    sys.argv = ["mini-agent"]
    from mini_agent.entry import main
    main()
    """
)
TURN_MACHINERY = (
    "mini_agent.context.injection",
    "mini_agent.context.images",
    "mini_agent.conversation",
    "anthropic",
    "mini_agent.events",  # the renderer's events: a dozen dataclasses
    "mini_agent.model.reading",
    "mini_agent.model.replies",
    "mini_agent.model.thinking",
)
"""What a turn needs and the REPL loads behind its prompt, never before it: each one delays the prompt."""


def _modules_at_the_prompt(tmp_path, *args: str, home=None) -> set[str]:
    import pexpect

    out = tmp_path / "modules.json"
    env = {**_environment(tmp_path), "TERM": "xterm", "MINI_AGENT_NO_SERVER": "1"}
    if home is not None:
        env["MINI_AGENT_HOME"] = str(home)
    driver = PROMPT_DRIVER.replace("OUT", repr(str(out))).replace('["mini-agent"]', repr(["mini-agent", *args]))
    child = pexpect.spawn(sys.executable, ["-c", driver], env=env, cwd=str(tmp_path))
    child.expect(pexpect.EOF, timeout=PATIENCE)
    child.close()
    modules = set(json.loads(out.read_text()))
    assert "mini_agent.ui.console" in modules, "the driver reached the REPL's prompt"
    return modules


def test_the_repls_first_prompt_comes_before_the_turn_machinery_loads(tmp_path):
    assert not _modules_at_the_prompt(tmp_path) & set(TURN_MACHINERY)


def test_continue_reads_its_session_behind_the_prompt_and_a_named_one_before_it(run_cli, api, tmp_path):
    """--continue's session is read behind the prompt, with the agent's build (its notice is printed above the
    prompt then: app/resumed_notice.py); a session named with --resume is read before it, as a wrong id stops the
    start there. Neither loads the tools or the resume into an agent before the prompt."""
    api.script(answer("Earlier answer."))
    done = run_cli(["-p", "an earlier question", "--output-format", "json"], api)
    assert done.returncode == 0
    home = tmp_path / "mini-agent-home"
    behind = {"mini_agent.tools", "mini_agent.sessions.resume", *TURN_MACHINERY}
    continued = _modules_at_the_prompt(tmp_path, "--continue", home=home)
    assert not continued & {"mini_agent.sessions", *behind}
    named = _modules_at_the_prompt(tmp_path, "--resume", json.loads(done.stdout)["session_id"], home=home)
    assert "mini_agent.sessions.store" in named, "the named session was read for its notice"
    assert not named & behind - {"mini_agent.conversation"}  # the loaded session is one


def test_configured_mcp_servers_are_made_and_started_behind_the_prompt(tmp_path):
    """The user's own servers need no trust question: their manager, connections and the secret set they mask
    with are the agent's build's, behind the prompt (app/mcp_setup.py)."""
    home = tmp_path / "mini-agent-home"
    home.mkdir()
    (home / "config.toml").write_text('[mcp_servers.docs]\ncommand = "docs-server"\n')
    modules = _modules_at_the_prompt(tmp_path, home=home)
    assert not modules & {"mini_agent.mcp.manager", "mini_agent.mcp.connection", "mini_agent.safety.secrets"}
    assert not modules & set(TURN_MACHINERY)


def test_commands_that_never_talk_to_a_model_load_none_of_it(tmp_path):
    for args in (["--version"], ["--help"], ["config"]):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "mini_agent", *args],
            env=_environment(tmp_path),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PATIENCE,
        )
        assert done.returncode == 0, done.stderr.decode()[-500:]
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines() if "|" in line}
        assert not imported & set(LOADED_AHEAD), args


def test_a_part_that_fails_to_load_leaves_the_others_and_the_waiters_alone():
    ran = []

    def broken() -> None:
        raise ImportError("not installed")

    preload = Preload(for_tools=(broken, lambda: ran.append("tools")), later=(lambda: ran.append("later"),))
    preload.wait_for_tools(timeout=0.0)  # never started: nothing to wait for
    preload.request_sent()
    preload.request_sent()
    preload.request_sent()  # one load per process, however many requests
    assert preload.done.wait(10)
    assert preload.tools_ready.is_set()
    assert ran == ["tools", "later"]


def test_the_rest_loads_only_once_a_second_request_is_out():
    ran = []
    preload = Preload(for_tools=(lambda: ran.append("tools"),), later=(lambda: ran.append("later"),))
    preload.request_sent()
    assert preload.tools_ready.wait(10)
    assert not preload.done.wait(0.2), "a run that ends with its first reply must not load the rest"
    assert ran == ["tools"]
    preload.request_sent()
    assert preload.done.wait(10)
    assert ran == ["tools", "later"]


def test_a_sessions_own_part_runs_after_the_tools_part_without_holding_tool_calls_and_too_late_never_runs():
    """The session adds its undo store's first snapshot (app/lifecycle.py): it runs after what tools need, and a
    tool call does not wait for it (a read has no use for it; a change waits on the undo stack's own lock); one
    added after the first request went out has missed its moment and is dropped, not run in a step's gap."""
    ran = []
    snapshot_may_end = threading.Event()
    preload = Preload(for_tools=(lambda: ran.append("tools"),), later=(lambda: ran.append("later"),))
    preload.also(lambda: (ran.append("undo store"), snapshot_may_end.wait(10)))
    preload.request_sent()
    assert preload.tools_ready.wait(10)
    preload.wait_for_tools()  # returns while the session's part still runs
    assert ran[0] == "tools" and not snapshot_may_end.is_set()
    snapshot_may_end.set()
    preload.also(lambda: ran.append("too late"))
    preload.request_sent()
    assert preload.done.wait(10)
    assert ran == ["tools", "undo store", "later"]
