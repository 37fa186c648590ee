"""`mini-agent "fix the bug"`: a positional prompt starts the REPL with it sent; subcommands stay subcommands."""

from __future__ import annotations

import difflib
import functools
import json

import typer
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support.fake_api import answer


def typed_texts(request: dict) -> list[str]:
    """The text blocks of the last user message that are not injected context."""
    return [
        block["text"]
        for block in request["messages"][-1]["content"]
        if block.get("type") == "text" and not block["text"].startswith("<context")
    ]


def test_a_positional_prompt_is_the_first_request_and_the_repl_goes_on(run_cli, api):
    api.script(answer("Looking at the bug."), answer("Second answer."))
    done = run_cli(["--model", "claude-first", "fix the bug", "--max-steps", "7"], api, typed=["and then?"])
    assert done.returncode == 0, done.stderr
    first, second = api.message_requests
    assert typed_texts(first) == ["fix the bug"] and first["model"] == "claude-first"  # options before it apply
    assert typed_texts(second) == ["and then?"]
    shown = done.stdout.decode()
    assert shown.index("› fix the bug") < shown.index("Looking at the bug.") < shown.index("Second answer.")


def test_unquoted_words_are_one_prompt(run_cli, api):
    api.script(answer("ok"))
    done = run_cli(["fix", "the", "config", "bug"], api, typed=[])  # "config" later on is not the subcommand
    assert done.returncode == 0, done.stderr
    assert typed_texts(api.message_requests[0]) == ["fix the config bug"]


def test_a_subcommand_name_stays_the_subcommand(run_cli, api):
    done = run_cli(["--model", "claude-x", "config", "--json"], api)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["settings"]["model"]["value"] == "claude-x"
    assert api.message_requests == []


def test_a_near_miss_of_a_subcommand_is_a_usage_error_and_dashes_send_it(run_cli, api):
    done = run_cli(["confg"], api, typed=[])
    assert done.returncode == 2 and api.message_requests == []
    assert "Did you mean 'config'?" in done.stderr.decode() and "mini-agent -- confg" in done.stderr.decode()
    api.script(answer("ok"))
    assert run_cli(["--", "confg"], api, typed=[]).returncode == 0
    assert typed_texts(api.message_requests[0]) == ["confg"]


def test_with_piped_stdin_the_positional_prompt_is_a_one_shot_task_with_stdin_attached(run_cli, api):
    api.script(answer("Reviewed."))
    done = run_cli(["review this"], api, input="diff --git a/x b/x\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == "Reviewed."
    (request,) = api.message_requests
    assert typed_texts(request) == ["review this"]
    blocks = [block["text"] for block in request["messages"][0]["content"]]
    assert any(text.startswith('<context name="stdin"') and "diff --git" in text for text in blocks)


def test_p_without_text_takes_the_positional_prompt_or_stdin(run_cli, api):
    api.script(answer("one"), answer("two"))
    assert run_cli(["explain it", "-p"], api).returncode == 0
    assert run_cli(["-p", "--max-steps", "3"], api, input="from stdin").returncode == 0
    assert [typed_texts(request) for request in api.message_requests] == [["explain it"], ["from stdin"]]


def test_a_p_prompt_that_starts_with_a_dash_is_still_the_prompt(run_cli, api):
    api.script(answer("ok"))
    assert run_cli(["-p", "-v is broken"], api).returncode == 0
    assert typed_texts(api.message_requests[0]) == ["-v is broken"]


def test_two_prompts_are_a_usage_error(run_cli, api):
    done = run_cli(["-p", "one task", "another"], api)
    assert done.returncode == 2 and "Two prompts" in done.stderr.decode()
    assert api.message_requests == []


WORD = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12).filter(
    lambda word: not word.startswith("-") and word.strip() == word and word
)


@functools.cache
def root_command():
    from mini_agent.cli.main import app

    return typer.main.get_command(app)  # ~25 ms to build: once


@settings(max_examples=100, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=5), st.sampled_from([[], ["--model", "m"], ["-y"]]))
def test_words_that_name_no_subcommand_arrive_whole_as_the_prompt(words, options):
    from mini_agent.cli.positional import PROMPT

    root = root_command()
    assume(words[0] not in root.commands and not difflib.get_close_matches(words[0], list(root.commands), 1, 0.75))
    for args in ([*options, *words], [*words, *options], [*options, "--", *words]):
        context = root.make_context("mini-agent", list(args))
        assert context.meta[PROMPT] == " ".join(words), args
        assert context.params["model"] == ("m" if "--model" in options else None)
