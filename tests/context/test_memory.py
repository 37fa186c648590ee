"""The user memory file: which prompts are notes to remember, and how notes are appended."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent.context.memory import add_note, note_from_prompt, notes


@pytest.mark.parametrize(
    ("prompt", "note"),
    [
        ("remember that I prefer tabs", "I prefer tabs"),
        ("Remember: the staging host is db-2", "the staging host is db-2"),
        ("remember to run the tests with -x", "to run the tests with -x"),
        ("记住：我喜欢喝茶", "我喜欢喝茶"),
        ("记住 周五不部署", "周五不部署"),
        ("remember when we fixed the parser?", None),
        ("记住了吗？", None),
        ("rememberable names", None),
        ("please remember the tabs", None),
        ("remember", None),
        ("fix the bug, and remember that it is urgent", None),
    ],
)
def test_only_a_prompt_that_starts_with_remember_is_a_note(prompt, note):
    assert note_from_prompt(prompt) == note


@given(st.text())
def test_a_prompt_not_starting_with_the_keyword_is_never_taken_as_a_note(text):
    stripped = text.lstrip().lower()
    if not (stripped.startswith("remember") or stripped.startswith("记住")):
        assert note_from_prompt(text) is None


def test_notes_are_appended_as_list_items_after_whatever_the_file_held(tmp_path):
    home = tmp_path / "home"
    add_note(home, "first  note\nover two lines")
    (home / "memory.md").write_text((home / "memory.md").read_text() + "my own line without newline")
    add_note(home, "second")
    assert notes(home) == ["- first note over two lines", "my own line without newline", "- second"]
    assert (home / "memory.md").stat().st_mode & 0o777 == 0o600
