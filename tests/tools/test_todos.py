"""todo_write: the whole list replaced each call, no question asked; the REPL shows it (and `/todos`), the session
file keeps it for --continue, stream-json carries it, and a sub-agent's list is its own."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st
from support import scripted_agent
from support.fake_api import answer, tool_use

from mini_agent.conversation import Session
from mini_agent.tools import default_tools
from mini_agent.tools.base import ToolContext
from mini_agent.tools.todo_list import Todo

TODOS = [
    {"content": "Read the parser", "status": "completed", "activeForm": "Reading the parser"},
    {"content": "Fix the off-by-one", "status": "in_progress", "activeForm": "Fixing the off-by-one"},
    {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
]
REGISTRY = default_tools()


def write(todos) -> object:
    return REGISTRY.call("todo_write", {"todos": todos}, ToolContext(cwd="."))


def test_a_list_is_taken_whole_and_returned_for_the_session_without_asking(api, settings_for):
    api.script(answer(tool_use("todo_write", {"todos": TODOS})), answer("Working on it."))
    asked = []
    agent = scripted_agent(settings_for(api), confirm=lambda request: asked.append(request))
    agent.run_turn("fix the bug")

    assert asked == [] and [todo.to_dict() for todo in agent.session.todos] == TODOS
    sent = api.message_requests[1]["messages"][-1]["content"][0]
    assert not sent.get("is_error") and "3 tasks, 1 completed" in sent["content"]


def test_each_call_replaces_the_list_and_an_empty_one_clears_it():
    assert write(TODOS).todos[1] == Todo("Fix the off-by-one", "in_progress", "Fixing the off-by-one")
    cleared = write([])
    assert cleared.todos == () and "empty" in cleared.content


def test_two_in_progress_are_kept_with_advice_and_bad_items_are_refused():
    both = write([{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}])
    assert not both.is_error and len(both.todos) == 2 and "keep one at a time" in both.content
    assert "'todos.0.status'" in write([{"content": "a", "status": "done"}]).content
    assert "is empty" in write([{"content": "  ", "status": "pending"}]).content
    assert "at most 100" in write([{"content": "a", "status": "pending"}] * 101).content
    assert "unknown parameter" in write([{"content": "a", "status": "pending", "priority": "high"}]).content


@given(
    st.lists(
        st.fixed_dictionaries({"content": st.text(min_size=1), "status": st.sampled_from(["pending", "completed"])})
    )
)
def test_a_stored_list_comes_back_as_it_was_written(items):
    result = write(items)
    if result.is_error:
        return
    session = Session()
    session.record_todos(result.todos)
    assert Session.restore(session.log).todos == result.todos


def test_the_repl_shows_the_list_after_an_update_and_continue_restores_it_for_todos(api, run_cli):
    api.script(answer(tool_use("todo_write", {"todos": TODOS})), answer("On it."))
    first = run_cli([], api, typed=["fix the bug"])
    shown = first.stdout.decode()
    assert first.returncode == 0
    assert "☑ Read the parser" in shown and "◐ Fixing the off-by-one" in shown and "☐ Run the tests" in shown

    again = run_cli(["--continue"], api, typed=["/todos"])
    listed = again.stdout.decode()
    assert "Todo list: 1 of 3 done, in progress: Fixing the off-by-one (/todos shows it)" in listed
    assert "1/3 done" in listed and "◐ Fixing the off-by-one" in listed and "☐ Run the tests" in listed


def test_stream_json_carries_the_list_in_the_tool_result_record(api, run_cli):
    api.script(answer(tool_use("todo_write", {"todos": TODOS})), answer("On it."))
    done = run_cli(["-p", "fix the bug", "--output-format", "stream-json"], api)
    records = [json.loads(line) for line in done.stdout.decode().splitlines()]
    result = next(record for record in records if record["type"] == "tool_result")
    assert done.returncode == 0 and result["name"] == "todo_write" and result["todos"] == TODOS


def test_text_progress_shows_the_list_with_its_escape_sequences_named(api, run_cli):
    hostile = [{"content": "Run\x1b]52;c;cHduZWQ=\x07 the tests", "status": "pending"}]
    api.script(answer(tool_use("todo_write", {"todos": hostile})), answer("On it."))
    done = run_cli(["-p", "fix the bug"], api)
    err = done.stderr.decode()
    assert "☐ Run⟨ESC⟩]52;c;cHduZWQ=⟨BEL⟩ the tests" in err and "\x1b" not in err


def test_a_sub_agent_keeps_its_own_list(api, settings_for):
    from mini_agent.app.build import AgentBuilder
    from mini_agent.model import AnthropicProvider

    mine = [{"content": "Delegate the search", "status": "in_progress", "activeForm": "Delegating"}]
    theirs = [{"content": "Search the code", "status": "completed", "activeForm": "Searching"}]
    api.script(
        answer(tool_use("todo_write", {"todos": mine})),
        answer(tool_use("task", {"description": "search", "prompt": "find the parser"})),
        answer(tool_use("todo_write", {"todos": theirs})),
        answer("Found it in parse.py."),
        answer("Done."),
    )
    settings = settings_for(api)
    agent = AgentBuilder(settings, AnthropicProvider(settings))(lambda event: None, lambda request: None)
    agent.run_turn("find the parser")
    assert [todo.to_dict()["content"] for todo in agent.session.todos] == ["Delegate the search"]


def test_a_known_secret_in_a_task_is_masked_in_the_list_shown_and_kept(api, run_cli, tmp_path):
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    todos = [{"content": f"Rotate {token}", "status": "pending"}]
    api.script(answer(tool_use("todo_write", {"todos": todos})), answer("ok"))
    done = run_cli(["-p", "plan the rotation", "--output-format", "stream-json"], api, env={"GITHUB_TOKEN": token})
    records = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    result = next(record for record in records if record["type"] == "tool_result")  # not Claude Code's `user`
    assert result["todos"][0]["content"].startswith("Rotate ") and token not in done.stdout.decode()
    entries = [json.loads(line) for path in tmp_path.rglob("*.jsonl") for line in path.read_text().splitlines()]
    (kept,) = [entry["todos"] for entry in entries if entry.get("type") == "todos"]
    assert kept[0]["content"].startswith("Rotate ") and token not in kept[0]["content"]
