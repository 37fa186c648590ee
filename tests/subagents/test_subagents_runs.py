"""Sub-agents in runs of the command (in process) against the loopback model: what the sub-agent is sent,
what it may run, what comes back, and what is kept."""

from __future__ import annotations

import json

from support import scripted_agent
from support.fake_api import answer, tool_use

ORIGINAL = 'Find where "retries" are configured & tell me <exactly> which file — ünïcode kept, please.'


def first_text(request: dict) -> str:
    content = request["messages"][0]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def tool_names(request: dict) -> list[str]:
    return [tool["name"] for tool in request["tools"]]


def session_entries(tmp_path) -> list[dict]:
    (path,) = (tmp_path / "mini-agent-home" / "sessions").rglob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_sub_agent_gets_the_original_request_verbatim_and_its_answer_comes_back(run_cli, api, tmp_path):
    (tmp_path / "settings.toml").write_text("retries = 4\n")
    api.script(
        answer(tool_use("task", {"description": "find retries", "prompt": "Search for the retries setting."})),
        answer(tool_use("read_file", {"path": "settings.toml"}, id="child-read")),
        answer("retries is set in settings.toml, line 1.", usage={"input_tokens": 40, "output_tokens": 7}),
        answer("It is in settings.toml."),
    )
    done = run_cli(["-p", ORIGINAL, "--output-format", "json"], api)
    assert done.returncode == 0, done.stderr.decode()
    parent_first, child_first, child_second, parent_second = api.message_requests

    brief = first_text(child_first)
    assert f"<original_user_request>\n{ORIGINAL}\n</original_user_request>" in brief
    assert "Search for the retries setting." in brief
    assert len(child_first["messages"]) == 1  # a fresh conversation: nothing of the parent's
    assert "task" in tool_names(parent_first) and "task" not in tool_names(child_first)
    assert "You are a sub-agent" in json.dumps(child_first["system"])

    # The answer goes back to the parent as the task call's result; the child's reading stays out of it.
    result = parent_second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and "retries is set in settings.toml, line 1." in result["content"]
    assert "child-read" not in json.dumps(parent_second["messages"])

    record = json.loads(done.stdout)
    assert record["result"] == "It is in settings.toml."
    assert record["usage"]["input_tokens"] == 100 + 100 + 40 + 100  # the sub-agent's tokens count too
    assert record["usage"]["output_tokens"] == 20 + 20 + 7 + 20


def test_a_sub_agent_cannot_run_what_the_parents_mode_forbids(run_cli, api, tmp_path):
    api.script(
        answer(tool_use("task", {"description": "make notes", "prompt": "Write notes.txt and run touch made.txt"})),
        answer(
            tool_use("write_file", {"path": "notes.txt", "content": "hello\n"}, id="w"),
            tool_use("bash", {"command": "touch made.txt"}, id="b"),
        ),
        answer("I could not write anything."),
        answer("The sub-agent was not allowed to change files."),
    )
    done = run_cli(["-p", "take notes", "--permission-mode", "plan"], api)
    assert done.returncode == 4, done.stderr.decode()  # refused calls: a sub-agent's count like the parent's
    progress = done.stderr.decode().splitlines()  # nested, one line per sub-agent tool call
    assert any(line.startswith("● task(make notes) ✓") for line in progress)
    assert any(line.startswith("  ⎿ [task 1] write_file(notes.txt) ✗") for line in progress)
    assert any(line.startswith("  ⎿ [task 1] bash(touch made.txt) ✗") for line in progress)
    assert not (tmp_path / "notes.txt").exists() and not (tmp_path / "made.txt").exists()
    results = api.message_requests[2]["messages"][-1]["content"]
    assert [block["is_error"] for block in results] == [True, True]
    assert all("plan mode" in block["content"].lower() for block in results)


def test_nobody_to_ask_means_no_for_the_sub_agent_too_and_rules_carry_over(run_cli, api, tmp_path):
    api.script(
        answer(tool_use("task", {"description": "write two", "prompt": "Write a.txt and b.txt"})),
        answer(
            tool_use("write_file", {"path": "a.txt", "content": "a\n"}),
            tool_use("write_file", {"path": "b.txt", "content": "b\n"}),
        ),
        answer("Wrote a.txt; b.txt was refused."),
        answer("Done."),
    )
    done = run_cli(["-p", "write files", "--allow", "write_file(a.txt)", "--output-format", "json"], api)
    assert done.returncode == 4, done.stderr.decode()
    denials = json.loads(done.stdout)["permission_denials"]
    assert [(d["tool"], d["input"], d["kind"], d["subagent"]) for d in denials] == [
        ("write_file", "b.txt", "approval", "1")
    ]
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert not (tmp_path / "b.txt").exists()  # default mode and no terminal: the question is a refusal
    report = api.message_requests[3]["messages"][-1]["content"][0]["content"]
    assert "Files changed by the sub-agent: a.txt" in report


def test_the_transcript_is_kept_and_resume_leaves_it_out_of_the_models_view(run_cli, api, tmp_path):
    api.script(
        answer(tool_use("task", {"description": "look", "prompt": "Say hi."})),
        answer("hi from the sub-agent"),
        answer("The sub-agent said hi."),
    )
    done = run_cli(["-p", "ask a helper", "--output-format", "json"], api)
    assert done.returncode == 0, done.stderr.decode()
    (entry,) = [entry for entry in session_entries(tmp_path) if entry["type"] == "subagent"]
    assert entry["agent"] == "task" and entry["description"] == "look"
    assert entry["result"] == "hi from the sub-agent"
    assert entry["usage"] == {**entry["usage"], "input_tokens": 100, "output_tokens": 20}
    messages = [e["message"] for e in entry["log"] if e["type"] == "message"]
    marked = "<original_user_request>\nask a helper\n</original_user_request>"
    assert messages[0]["content"][0]["text"].startswith(marked)
    assert messages[-1]["content"] == [{"type": "text", "text": "hi from the sub-agent"}]

    api.script(answer("Still here."))
    again = run_cli(["-c", "-p", "and now?", "--output-format", "json"], api)
    assert again.returncode == 0, again.stderr.decode()
    assert "hi from the sub-agent" not in json.dumps(api.message_requests[-1]["messages"][:2])
    assert json.loads(again.stdout)["usage"]["input_tokens"] == 400  # the session's totals, sub-agent included


EXPLORER = """---
description: Reads code to answer a question; changes nothing
tools: [read_file]
model: claude-small
---
Answer with file paths and line numbers.
"""


def test_named_read_only_agents_are_offered_by_name_and_run_with_their_own_tools_and_model(run_cli, api, tmp_path):
    agents = tmp_path / ".mini-agent" / "agents"
    agents.mkdir(parents=True)
    (agents / "explorer.md").write_text(EXPLORER)
    for word in ("alpha", "beta"):
        routed = answer(f"{word} done")
        api.route(lambda body, w=word: body["model"] == "claude-small" and w in first_text(body), routed)
    api.script(
        answer(
            tool_use("task", {"description": "a", "prompt": "look at alpha", "agent": "explorer"}, id="ta"),
            tool_use("task", {"description": "b", "prompt": "look at beta", "agent": "explorer"}, id="tb"),
        ),
        answer("Both done."),
    )
    done = run_cli(["-p", "explore", "--output-format", "stream-json"], api)
    assert done.returncode == 0, done.stderr.decode()
    parent_first = api.message_requests[0]
    (task,) = [tool for tool in parent_first["tools"] if tool["name"] == "task"]
    assert task["input_schema"]["properties"]["agent"]["enum"] == ["explorer"]
    assert "explorer: Reads code to answer a question" in task["description"]

    children = [body for body in api.message_requests if body["model"] == "claude-small"]
    assert len(children) == 2
    assert all(tool_names(body) == ["read_file"] for body in children)
    assert all("Answer with file paths and line numbers." in json.dumps(body["system"]) for body in children)
    results = api.message_requests[-1]["messages"][-1]["content"]
    assert [(r["tool_use_id"], r["content"]) for r in results] == [("ta", "alpha done"), ("tb", "beta done")]

    records = [json.loads(line) for line in done.stdout.decode().splitlines()]
    nested = [record for record in records if "subagent" in record]
    assert {record["subagent"]["agent"] for record in nested} == {"explorer"}
    assert {record["subagent"]["id"] for record in nested} == {"1", "2"}
    # Claude Code's shapes: a sub-agent's assistant and user records name the task call that started it
    for record in records:
        if record["type"] in ("assistant", "user"):
            started_by = {"a": "ta", "b": "tb"}[record["subagent"]["description"]] if "subagent" in record else None
            assert record["parent_tool_use_id"] == started_by
    assert {r["parent_tool_use_id"] for r in nested if r["type"] == "assistant"} == {"ta", "tb"}


# ---- in process: Ctrl-C, the front matter, what may run side by side -----------------------------------


def make_agent(api, settings_for, confirm):
    from mini_agent.subagents.delegation import with_subagents
    from mini_agent.tools import default_tools

    settings = settings_for(api)
    registry, delegation, problems = with_subagents(default_tools(), settings)
    events: list = []
    agent = scripted_agent(settings, registry=registry, emit=events.append, confirm=confirm)
    delegation.attach(agent)
    return agent, events, problems


def test_ctrl_c_in_a_sub_agent_stops_the_turn_and_settles_both_transcripts(api, settings_for, tmp_path):
    from mini_agent.errors import TurnAborted
    from mini_agent.events import SubAgentEvent

    def pressed_ctrl_c(request):
        raise KeyboardInterrupt  # the human's answer to the sub-agent's question

    api.script(
        answer(tool_use("task", {"description": "write", "prompt": "Write x.txt"}, id="t")),
        answer("Writing it now.", tool_use("write_file", {"path": "x.txt", "content": "x"}, id="w")),
    )
    agent, events, _ = make_agent(api, settings_for, pressed_ctrl_c)
    try:
        agent.run_turn("please write x")
        raise AssertionError("the turn went on after Ctrl-C")
    except TurnAborted:
        pass
    assert not (tmp_path / "x.txt").exists()
    (settled,) = agent.session.messages[-1]["content"]
    assert settled["tool_use_id"] == "t" and settled["is_error"]
    assert "Writing it now." in settled["content"]  # what the sub-agent had said reaches the model
    (entry,) = [entry for entry in agent.session.log if entry["type"] == "subagent"]
    assert entry["stopped"] == "interrupted with Ctrl-C"
    child_results = entry["log"][-1]["message"]["content"]
    assert child_results[0]["tool_use_id"] == "w" and child_results[0]["is_error"]
    assert agent.session.usage.input_tokens == 200  # both replies counted, the sub-agent's included
    assert any(isinstance(event, SubAgentEvent) for event in events)


def test_front_matter_forms_and_bad_files(tmp_path):
    from mini_agent.subagents.definitions import load_definitions, parse_front_matter

    assert parse_front_matter("---\ntools:\n  - read_file\n  - bash\nmodel: 'm'\n---\nBody\n") == (
        {"tools": ["read_file", "bash"], "model": "m"},
        "Body",
    )
    assert parse_front_matter("no front matter") == ({}, "no front matter")
    (tmp_path / "good.md").write_text("---\ndescription: Good one\ntools: read_file, bash\n---\nBe good.\n")
    (tmp_path / "nodesc.md").write_text("---\ntools: read_file\n---\n")
    (tmp_path / "typo.md").write_text("---\ndescription: x\ntool: read_file\n---\n")
    (tmp_path / "open.md").write_text("---\ndescription: x\n")
    found, problems = load_definitions(tmp_path)
    assert list(found) == ["good"] and found["good"].tools == ("read_file", "bash")
    assert found["good"].prompt == "Be good."
    assert sorted(problem.split(":")[0].rsplit("/", 1)[-1] for problem in problems) == [
        "nodesc.md",
        "open.md",
        "typo.md",
    ]


def test_only_read_only_named_agents_run_side_by_side(api, settings_for, tmp_path):
    agents = tmp_path / ".mini-agent" / "agents"
    agents.mkdir(parents=True)
    (agents / "reader.md").write_text("---\ndescription: reads\ntools: [read_file]\n---\n")
    (agents / "fixer.md").write_text("---\ndescription: fixes\ntools: [read_file, edit_file]\n---\n")
    (agents / "all.md").write_text("---\ndescription: everything\n---\n")
    (agents / "odd.md").write_text("---\ndescription: odd\ntools: [read_file, teleport]\n---\n")
    agent, _, problems = make_agent(api, settings_for, lambda request: None)
    task = agent.registry.get("task")
    assert task.concurrent({"agent": "reader"}) is True
    assert [task.concurrent({"agent": name}) for name in ("fixer", "all", "odd")] == [False, False, False]
    assert task.concurrent({}) is False  # the general-purpose agent has every tool
    assert problems == [f"{agents / 'odd.md'}: unknown tools teleport left out"]


def test_an_agent_file_names_its_tools_as_claude_code_does_and_gets_them(api, settings_for, tmp_path):
    # `tools: Read, Bash` used to be "unknown tools Read, Bash left out": a sub-agent with no tools at all.
    agents = tmp_path / ".mini-agent" / "agents"
    agents.mkdir(parents=True)
    (agents / "helper.md").write_text("---\ndescription: helps\ntools: Read, Bash\n---\n")
    (agents / "reader.md").write_text("---\ndescription: reads\ntools: [Read]\n---\n")
    agent, _, problems = make_agent(api, settings_for, lambda request: None)
    assert problems == []
    task = agent.registry.get("task")
    assert task.concurrent({"agent": "reader"}) is True and task.concurrent({"agent": "helper"}) is False
    api.script(
        answer(tool_use("task", {"description": "look", "prompt": "Look around.", "agent": "helper"})),
        answer("Nothing to see."),
        answer("Done."),
    )
    agent.run_turn("delegate")
    assert tool_names(api.message_requests[1]) == ["read_file", "bash"]


CLAUDE_REVIEWER = """---
name: code-reviewer
description: Reviews code for quality and security.
tools: Read, Grep, Glob, Bash
disallowedTools: Bash
model: sonnet
color: blue
permissionMode: plan
---
You are a senior code reviewer.
"""


def test_claude_code_s_agent_files_load_as_written(api, settings_for, tmp_path):
    """`.claude/agents/*.md` with Claude Code's keys: its tools without a counterpart (Grep, Glob) and keys with
    no use here (color, permissionMode) pass without a word; `disallowedTools` takes Bash away; `sonnet` is the
    newest Sonnet beside a Claude main model. `.mini-agent/agents/` wins a name over `.claude/agents/`."""
    claude = tmp_path / ".claude" / "agents"
    claude.mkdir(parents=True)
    (claude / "code-reviewer.md").write_text(CLAUDE_REVIEWER)
    (claude / "shared.md").write_text("---\ndescription: from .claude\n---\n")
    ours = tmp_path / ".mini-agent" / "agents"
    ours.mkdir(parents=True)
    (ours / "shared.md").write_text("---\ndescription: from .mini-agent\n---\n")
    agent, _, problems = make_agent(api, settings_for, lambda request: None)
    assert problems == []
    task = agent.registry.get("task")
    assert "from .mini-agent" in task.description and "from .claude" not in task.description
    assert task.concurrent({"agent": "code-reviewer"}) is True  # read_file only: read-only
    api.script(
        answer(tool_use("task", {"description": "review", "prompt": "Review it.", "agent": "code-reviewer"})),
        answer("Looks fine."),
        answer("Reviewed."),
    )
    agent.run_turn("review")
    child = api.message_requests[1]
    assert tool_names(child) == ["read_file"] and child["model"] == "claude-sonnet-5-5"
    assert "You are a senior code reviewer." in json.dumps(child["system"])


def test_claude_code_s_model_names_resolve_beside_the_main_model():
    from mini_agent.model.endpoints import model_for_agent

    assert model_for_agent("inherit", "claude-opus-5") == "claude-opus-5"
    assert model_for_agent("haiku", "claude-opus-5") == "claude-haiku-5-5"
    assert model_for_agent("opus", "qwen3-coder") == "qwen3-coder"  # another endpoint's names: the main model
    assert model_for_agent("claude-small", "qwen3-coder") == "claude-small"


def test_a_sub_agent_s_requests_carry_the_project_s_instructions_and_the_user_s_memory(run_cli, api, tmp_path):
    """Every model call carries the context it needs: the main request had AGENTS.md and the memory, the
    sub-agent's had neither."""
    (tmp_path / "AGENTS.md").write_text("Always use spaces, never tabs.\n")
    home = tmp_path / "mini-agent-home"
    home.mkdir(exist_ok=True)
    (home / "memory.md").write_text("- The user's name is Ada.\n")
    api.script(
        answer(tool_use("task", {"description": "indent", "prompt": "Fix the indentation of a.py."})),
        answer("Fixed with spaces."),
        answer("Done."),
    )
    done = run_cli(["-p", "fix the indentation"], api)
    assert done.returncode == 0, done.stderr.decode()
    main, child, _ = (json.dumps(body) for body in api.message_requests)
    for sent in (main, child):
        assert "Always use spaces, never tabs." in sent and "The user's name is Ada." in sent
    assert "Fix the indentation of a.py." in child
