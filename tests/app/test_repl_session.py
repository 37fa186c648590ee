"""The REPL's behaviour across a session, in process (`run_cli(typed=...)`: prompt_toolkit reads the lines from a
pipe, end of input is Ctrl-D): turns, slash commands, memory notes, compaction, resuming, the input history.

What only a real terminal shows (keys, Ctrl-C, the approval keypress, escape codes) stays in tests/e2e/."""

from __future__ import annotations

import json

from support.conversation import without_cache_control
from support.fake_api import answer, failure, tool_use


def typed_turns(request: dict) -> list[str]:
    return [
        message["content"][0]["text"]
        for message in request["messages"]
        if message["role"] == "user" and message["content"] and message["content"][0].get("type") == "text"
    ]


def context_text(request: dict, name: str) -> list[str]:
    """Every `<context name=...>` block of this name the request carries, in order."""
    opening = f'<context name="{name}"'
    return [
        block["text"]
        for message in request["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "text" and block["text"].startswith(opening)
    ]


def shown(done) -> str:
    """What the REPL printed, its words only: the console wraps long lines at its width."""
    return " ".join(done.stdout.decode().split())


def assert_in_order(text: str, parts: list[str]) -> None:
    at = 0
    for part in parts:
        assert part in text[at:], f"{part!r} is not where it should be in:\n{text}"
        at = text.index(part, at) + len(part)


def test_one_turn_per_line_and_ctrl_d_exits(run_cli, api):
    api.script(answer("Hello from the model."), answer("Second answer."))
    done = run_cli([], api, typed=["hello", "and again"])
    assert done.returncode == 0, done.stderr.decode()
    assert "Hello from the model." in shown(done) and "Second answer." in shown(done)
    second = api.message_requests[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[2]["content"][0]["text"] == "and again"


def test_model_clear_and_resume_commands(run_cli, api):
    api.script(answer("About apples."), answer("Fresh start."), answer("Back to apples."))
    api.pages["GET /v1/models"] = {"data": [{"id": "claude-test"}, {"id": "claude-other"}], "has_more": False}
    typed = [
        "tell me about apples",
        "/model",
        "/model claude-nope",
        "/model claude-other",
        "/clear",
        "something else",
        "/resume",
        "/resume 1",
        "and pears?",
    ]
    done = run_cli([], api, typed=typed)
    assert done.returncode == 0, done.stderr.decode()
    text = shown(done)
    assert_in_order(
        text,
        [
            "About apples.",
            "the endpoint lists: claude-test, claude-other",
            "claude-nope is not among the models",
            "model claude-other",
            "New conversation.",
            "Fresh start.",
            "1. ",
            "Continuing session",
            "Back to apples.",
        ],
    )
    listed = text[text.index("Fresh start.") : text.index("Continuing session")]
    assert "tell me about apples" in listed
    fresh, resumed = api.message_requests[1], api.message_requests[2]
    assert fresh["model"] == "claude-other" and typed_turns(fresh) == ["something else"]
    assert typed_turns(resumed) == ["tell me about apples", "and pears?"]


def test_clear_is_a_clean_slate(run_cli, api, tmp_path):
    (tmp_path / "apples.txt").write_text("Apples are red.\n")
    api.script(
        answer(tool_use("read_file", {"path": "apples.txt"}, id="r1")),
        answer("Apples are red."),
        answer(tool_use("edit_file", {"path": "apples.txt", "old_string": "red", "new_string": "green"}, id="e1")),
        answer("I need to read it first."),
    )
    done = run_cli([], api, typed=["what colour are apples?", "/clear", "make them green"])
    assert done.returncode == 0, done.stderr.decode()
    assert "New conversation." in shown(done) and "I need to read it first." in shown(done)
    # not even asked: an edit of a file not read cannot succeed
    assert "needs your approval" not in done.stdout.decode() + done.stderr.decode()
    fresh = api.message_requests[2]
    sent = json.dumps(fresh)
    # None of the old conversation's activity: not its words, not its tool calls, not the file it read.
    assert typed_turns(fresh) == ["make them green"]
    assert "what colour" not in sent and "r1" not in sent and "read_file {" not in sent
    # The read-before-edit state went too: the edit is refused until the file is read again.
    result = api.message_requests[3]["messages"][-1]["content"][0]
    assert result["is_error"] and "read" in result["content"].lower()
    assert (tmp_path / "apples.txt").read_text() == "Apples are red.\n"


def test_input_history_persists_between_sessions(run_cli, api):
    api.script(answer("One."), answer("Two."))
    assert run_cli([], api, typed=["keep this line in the history"]).returncode == 0
    done = run_cli([], api, typed=["\x1b[A"])  # Up: the previous session's input, then Enter sends it
    assert done.returncode == 0, done.stderr.decode()
    assert "Two." in shown(done)
    assert typed_turns(api.message_requests[-1]) == ["keep this line in the history"]


def test_a_session_with_an_undone_edit_is_continued_with_the_same_prefix_system_and_tools(run_cli, api, tmp_path):
    target = tmp_path / "app.py"
    target.write_text("print('old')\n")
    api.script(
        answer(tool_use("read_file", {"path": "app.py"})),
        answer(tool_use("edit_file", {"path": "app.py", "old_string": "old", "new_string": "new"})),
        answer("Changed it."),
        answer("Noted, it is back to old."),
        answer("Continuing."),
    )
    mode = ["--permission-mode", "accept-edits"]  # the approval keypress is the pty test's (tests/e2e/test_repl.py)
    done = run_cli(mode, api, typed=["now change the greeting", "/undo", "did it work?"])
    assert done.returncode == 0, done.stderr.decode()
    assert "app.py: undone" in shown(done) and target.read_text() == "print('old')\n"
    after_undo = api.message_requests[3]["messages"][-1]["content"]
    assert any('type="undo"' in block.get("text", "") and "app.py" in block.get("text", "") for block in after_undo)
    before = api.message_requests[-1]
    done = run_cli([*mode, "--continue"], api, typed=["and now?"])
    assert done.returncode == 0, done.stderr.decode()
    assert "Continuing session" in shown(done) and "Continuing." in shown(done)
    resumed = api.message_requests[-1]
    reply = {"role": "assistant", "content": [{"type": "text", "text": "Noted, it is back to old."}]}
    expected_prefix = without_cache_control(before["messages"]) + [reply]
    assert without_cache_control(resumed["messages"])[: len(expected_prefix)] == expected_prefix
    assert json.dumps(resumed["system"]) == json.dumps(before["system"])
    assert json.dumps(resumed["tools"]) == json.dumps(before["tools"])
    assert typed_turns(resumed)[-1] == "and now?"


def test_compact_with_a_focus_and_trace_toggle_in_the_session(run_cli, api):
    summary = "## User goals and explicit instructions\nPort the parser."
    api.script(answer("First done."), answer("Second done."), answer(summary), answer("Third done."))
    typed = ["port the parser", "now the tests", "/compact keep the parser API", "/trace", "and the docs"]
    done = run_cli([], api, typed=typed)
    assert done.returncode == 0, done.stderr.decode()
    text = shown(done)
    assert "Compacted the conversation (manual)" in text and "trace on" in text
    after_trace = text[text.index("trace on") :]
    assert "trace · original message" in after_trace and "enricher mentions" in after_trace
    assert after_trace.index("enricher mentions") < after_trace.index("Third done.")
    summary_request, after = api.message_requests[2], api.message_requests[3]
    assert "focus on: keep the parser API" in summary_request["messages"][0]["content"][0]["text"]
    assert "Port the parser." in after["system"][2]["text"]
    assert after["messages"][-1]["content"][0]["text"] == "and the docs"


def test_instruction_and_memory_files_changed_by_the_agent_are_in_the_next_turns_request(run_cli, api, tmp_path):
    (tmp_path / "AGENTS.md").write_text("Use tabs.\n")
    home = tmp_path / "mini-agent-home"
    home.mkdir()
    (home / "memory.md").write_text("- The user is called Ada.\n")
    api.script(
        answer(
            tool_use("read_file", {"path": "AGENTS.md"}, id="r1"),
            tool_use("edit_file", {"path": "AGENTS.md", "old_string": "tabs", "new_string": "spaces"}, id="e1"),
        ),
        answer("Switched to spaces."),
        answer(tool_use("bash", {"command": "echo '- Ada likes tea.' >> mini-agent-home/memory.md"}, id="b1")),
        answer("Noted the tea."),
        answer("Spaces and tea."),
    )
    # Outside the sandbox: inside it, the agent's own home (where memory.md lives) is read-only to commands.
    typed = ["prefer spaces from now on", "note that I like tea", "what do you know?"]
    done = run_cli(["--dangerously-skip-permissions"], api, typed=typed)
    assert done.returncode == 0, done.stderr.decode()
    assert "Spaces and tea." in shown(done)
    first, second, third = api.message_requests[0], api.message_requests[2], api.message_requests[4]
    assert (tmp_path / "AGENTS.md").read_text() == "Use spaces.\n"
    assert "Use tabs." in context_text(first, "project_instructions")[-1]
    # Well inside the 30 s and 60 s TTLs: the edit and the command, not the clock, made the sources read again.
    assert "Use spaces." in context_text(second, "project_instructions")[-1]
    assert "Ada likes tea." in context_text(third, "user_memory")[-1]


def test_continue_shows_the_last_exchange_before_the_prompt(run_cli, api):
    api.script(answer("Apples are red."), answer("Pears are green.\nAnd sweet."), answer("Plums next."))
    assert run_cli(["-p", "what colour are apples?"], api).returncode == 0
    assert run_cli(["-p", "and pears?", "--continue"], api).returncode == 0
    done = run_cli(["--continue"], api, typed=["plums?", "/resume"])
    assert done.returncode == 0, done.stderr.decode()
    text = shown(done)
    assert_in_order(
        text,
        [
            "Continuing session",
            "› what colour are apples?",
            "Apples are red.",
            "› and pears?",
            "Pears are green.",
            "And sweet.",
            "Plums next.",
            "No other session",
        ],
    )


def test_an_overflow_compaction_cannot_fix_says_what_to_do_without_the_program_prefix(run_cli, api, tmp_path):
    too_long = "prompt is too long: 250000 tokens > 200000 maximum"
    api.script(failure(400, "invalid_request_error", too_long), answer("Fresh and small."))
    done = run_cli([], api, typed=["summarise everything", "/clear", "hello"])
    assert done.returncode == 0, done.stderr.decode()
    text = shown(done)
    said = text[text.index("The conversation is too long") : text.index("New conversation.")]
    assert "mini-agent:" not in said
    for part in ("Compaction could not make the conversation any smaller", "/clear", "bigger context window"):
        assert part in said
    assert "attach less" in said and "Fresh and small." in text
    session = sorted((tmp_path / "mini-agent-home" / "sessions").glob("*/*.jsonl"))
    logged = [json.loads(line) for path in session for line in path.read_text().splitlines()[1:]]
    (error,) = [entry for entry in logged if entry["type"] == "turn_error"]
    assert error["kind"] == "overflow" and "/clear" in error["message"]


def test_remember_and_memory_add_append_to_the_user_memory_file_shown_in_context_and_the_next_request(
    run_cli, api, tmp_path
):
    api.script(answer("Tabs it is, and tea."))
    typed = ["remember that I prefer tabs", "/memory add 记住 I drink tea", "/context", "what do I like?"]
    done = run_cli([], api, typed=typed)
    assert done.returncode == 0, done.stderr.decode()
    text = shown(done)
    assert text.count("Saved to") == 2 and "I prefer tabs" in text
    assert "user memory: 2 line(s) in" in text and "Tabs it is, and tea." in text
    memory = (tmp_path / "mini-agent-home" / "memory.md").read_text()
    assert memory == "- I prefer tabs\n- 记住 I drink tea\n"
    (request,) = api.message_requests  # the notes themselves were not sent to the model as turns
    assert [m["content"][0]["text"] for m in request["messages"]] == ["what do I like?"]
    assert "- I prefer tabs\n- 记住 I drink tea" in context_text(request, "user_memory")[-1]


def test_emoji_codes_in_what_the_repl_shows_stay_as_written(run_cli, api):
    """rich would turn `:warning:` into an emoji wherever it reads markup: the REPL shows text as it came."""
    api.script(answer("Careful :warning: here, and :rocket: there."))
    done = run_cli([], api, typed=["hello", "!echo :thumbs_up: done"])
    assert done.returncode == 0, done.stderr.decode()
    assert ":warning:" in shown(done) and ":rocket:" in shown(done) and ":thumbs_up: done" in shown(done)
    assert not {"⚠", "🚀", "👍"} & set(shown(done))
