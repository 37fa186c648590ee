"""A server prompt's arguments from what was typed, and its messages as a turn: pure code, no server."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent.errors import ConfigError
from mini_agent.mcp.catalog import PromptArgument, RemotePrompt
from mini_agent.mcp.prompts import PromptCommand, arguments, expanded, named_server

CODE, FOCUS = PromptArgument("code", required=True), PromptArgument("focus")
REVIEW = PromptCommand("docs", RemotePrompt("review", "", (CODE, FOCUS)))


def test_arguments_by_position_by_name_and_the_last_takes_the_rest():
    assert arguments(REVIEW, "a.py") == {"code": "a.py"}
    assert arguments(REVIEW, "a.py speed") == {"code": "a.py", "focus": "speed"}
    assert arguments(REVIEW, "focus=speed fix the parser") == {"focus": "speed", "code": "fix the parser"}
    assert arguments(REVIEW, "'a b.py' all of it") == {"code": "a b.py", "focus": "all of it"}
    assert arguments(REVIEW, "x=1") == {"code": "x=1"}  # not a declared name: a value
    with pytest.raises(ConfigError, match="needs code"):
        arguments(REVIEW, "focus=speed")
    none = PromptCommand("docs", RemotePrompt("hello"))
    with pytest.raises(ConfigError, match="takes no more arguments"):
        arguments(none, "extra")


def test_the_server_a_command_names():
    assert named_server("/mcp__docs__review 42") == "docs" and named_server("/mcp__docs") is None
    assert named_server("/review") is None


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.text()), max_size=4))
def test_a_servers_messages_can_neither_close_the_tag_nor_mention_a_file(messages):
    result = SimpleNamespace(
        messages=[
            SimpleNamespace(role=role, content=SimpleNamespace(type="text", text=text)) for role, text in messages
        ]
    )
    turn = expanded(REVIEW, result).turn
    body = turn[turn.index(">") + 1 : turn.rindex("</mcp_prompt>")]
    assert "@" not in turn and "</mcp_prompt>" not in body and "<system_hint" not in body
    assert body.replace("<assistant_message>", "").replace("</assistant_message>", "").count("<") == 0
