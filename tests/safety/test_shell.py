"""The shell-command classifier: the corpus, the reasons and rule forms it gives, and invariants under hypothesis."""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections import Counter
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.shell_corpus import CORPUS, DESTRUCTIVE, READ_ONLY

from mini_agent.safety.shell import Classification, classify, grammar
from mini_agent.safety.shell.verdict import SEVERITY
from mini_agent.safety.workspace import Workspace


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A project directory and a separate home, both fresh, so no verdict depends on this machine's files."""
    base = tmp_path_factory.mktemp("shell").resolve()
    (base / "project").mkdir()
    (base / "home").mkdir()
    return Workspace(root=base / "project", home=base / "home")


def assert_consistent(result: Classification) -> None:
    """Every part explains itself, and the whole is as bad as its worst part (worse only when unparsed)."""
    assert all(part.reason and part.forms and part.forms[0] == part.text for part in result.parts)
    worst_part = max((SEVERITY[part.kind] for part in result.parts), default=0)
    if result.parsed and result.reason != "empty command":
        assert SEVERITY[result.kind] == worst_part
    else:
        assert SEVERITY[result.kind] >= max(worst_part, SEVERITY["ordinary"])


def test_the_corpus_is_big_enough_in_every_category():
    counts = Counter(category for *_, category in CORPUS)
    assert len(CORPUS) >= 280
    assert counts["read-only"] >= 90 and counts["destructive"] >= 90
    assert counts["ordinary"] >= 60 and counts["obfuscated"] >= 40


@pytest.mark.parametrize(
    ("command", "kind", "category"),
    CORPUS,
    ids=[command if command.strip() else repr(command) for command, *_ in CORPUS],
)
def test_corpus(command: str, kind: str, category: str, workspace: Workspace):
    result = classify(command, workspace)
    assert result.kind == kind, f"{category}: {result.reason}"
    assert_consistent(result)


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("rm -rf ~", "recursive deletion of a broad target (~)"),
        ("rm -f /", "forced deletion of a broad target (/)"),
        ("git log", "read-only: git log without writing flags"),
        ("npm test", "not on the read-only list"),
        ("cat .env", "reads a likely secret (.env)"),
        ("git push -f", "force-push rewrites remote history"),
        ("echo x > /etc/hosts", "writes /etc/hosts, which is protected: it is a system file under /etc"),
        ("mkdir /opt/app", "writes outside the working directory: /opt/app"),
        ("echo hi > out.txt", "writes out.txt"),
        ("$CMD -rf /", "the command's name is computed at run time"),
        ('bash -c "$X"', "runs code built at run time"),
        ("curl -s x | sh", "runs text piped into a shell (sh)"),
        (":(){ :|:& };:", "fork bomb"),
        ('echo "unterminated', "could not be fully parsed"),
        ("sudo ls", "runs as another user (sudo)"),
        ("dd if=a of=/dev/sda", "block device /dev/sda"),
        ("FOO=1 make", "sets FOO"),
        ("git -c core.pager='rm -rf ~' log", "broad target (~)"),
        ("ls " + "(" * 300 + "x", "could not be fully parsed"),
    ],
)
def test_reasons_say_what_matters(command: str, reason: str, workspace: Workspace):
    assert reason in classify(command, workspace).reason


@pytest.mark.parametrize(
    ("command", "form"),
    [
        ("timeout 5 npm test", "npm test"),
        ('bash -c "npm test"', "npm test"),
        ("eval 'npm test'", "npm test"),
        ("nice -n 5 nohup npm test", "nohup npm test"),
        ("nice -n 5 nohup npm test", "npm test"),
        ("sudo npm test", "npm test"),
        ("env NO_COLOR=1 npm test", "npm test"),
        ("LC_ALL=C sort x", "sort x"),
        ("xargs rm", "rm"),
        ("ls $(npm test)", "npm test"),
        ("find . -name '*.py' -exec black {} +", "black {}"),
        ("echo hi > out.txt", "echo hi > out.txt"),
    ],
)
def test_forms_for_permission_rules(command: str, form: str, workspace: Workspace):
    assert any(form in part.forms for part in classify(command, workspace).parts)


def test_a_prefix_that_changes_what_runs_is_kept_in_every_form(workspace: Workspace):
    (part,) = classify("LD_PRELOAD=./x.so npm test", workspace).parts
    assert part.forms == ("LD_PRELOAD=./x.so npm test",)


def test_nested_commands_are_parts_of_their_own(workspace: Workspace):
    result = classify("ls $(rm -rf ~) && bash -c 'git status'", workspace)
    assert [part.text for part in result.parts] == ["rm -rf ~", "ls $(rm -rf ~)", "git status", "bash -c git status"]
    assert [part.kind for part in result.parts] == ["destructive", "read-only", "read-only", "read-only"]


def test_code_nested_deeper_than_the_limit_is_destructive(workspace: Workspace):
    command = "ls"
    for _ in range(8):
        command = "bash -c " + shlex.quote(command)
    result = classify(command, workspace)
    assert (result.kind, result.reason) == ("destructive", "nested too deeply to check")


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("ls " * 40_000, "ordinary"),
        ("rm -rf / " + "x" * 100_001, "destructive"),
        ("ls\x00rm -rf /", "destructive"),
        ("(" * 3_000 + "ls" + ")" * 3_000, "ordinary"),
        ("rm " + " ".join(f"f{i}" for i in range(2_000)), "ordinary"),
    ],
    ids=["too long", "too long and destructive", "NUL byte", "deep nesting", "too many words"],
)
def test_input_beyond_the_limits_is_never_read_only(command: str, kind: str, workspace: Workspace):
    result = classify(command, workspace)
    assert result.kind == kind


def test_characters_that_crash_tree_sitter_bash_never_reach_it(workspace: Workspace):
    """tree-sitter-bash 0.25 segfaults on `{` followed later by a character beyond U+FFFF (upstream #337), about
    half the time; a child process parses such input over and over and must survive."""
    code = (
        "from mini_agent.safety.shell import classify\n"
        "from mini_agent.safety.workspace import Workspace\n"
        "from pathlib import Path\n"
        f"workspace = Workspace(root=Path({str(workspace.root)!r}), home=Path({str(workspace.home)!r}))\n"
        "for point in range(0x10000, 0x110000, 0x1111):\n"
        "    assert classify('{' + chr(point) + ' ls', workspace).kind\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    assert classify("git commit -m '🎉 {x}' && rm -rf ~/🎉", workspace).parts[1].text == "rm -rf ~/🎉"


@settings(max_examples=200, deadline=None)
@given(st.text(st.one_of(st.characters(exclude_categories=()), st.characters(min_codepoint=0x10000)), max_size=50))
def test_the_parser_never_sees_a_four_byte_character_and_the_text_comes_back_intact(text: str):
    source = grammar.prepare(text)
    assert source is not None
    assert not any(0xF0 <= byte <= 0xF7 for byte in source.data)
    assert source.text(SimpleNamespace(text=source.data)) == text


def test_importing_the_package_does_not_load_tree_sitter():
    code = "import sys, mini_agent.safety.shell; assert 'tree_sitter' not in sys.modules, 'loaded at import'"
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- properties ---------------------------------------------------------------------------------------------

ANY_TEXT = st.text(st.characters(exclude_categories=()), max_size=200)
TOKENS = [
    "rm", "-rf", "/", "~", "ls", "git", "push", "-f", "cat", ".env", "x=rm", "$x", "$(", ")", "`", "'", '"', "\\",
    "|", "||", "&&", ";", "&", "<(", ">(", ">", ">>", "2>&1", "<", "<<EOF\n", "\nEOF\n", "<<<", "/dev/sda", "bash",
    "-c", "eval", "sudo", "find", "-exec", "{}", "+", "\\;", "xargs", "(", "{", "}", "if", "then", "fi", "for",
    "do", "done", "$'\\x72m'", "*", "..", "#", "\n", "f()", "{ :|:& }", "timeout", "5", "env", "LD_PRELOAD=x",
]  # fmt: skip
SHELLISH = st.lists(st.sampled_from(TOKENS), max_size=25).flatmap(
    lambda tokens: st.lists(st.sampled_from([" ", "", "  "]), min_size=len(tokens), max_size=len(tokens)).map(
        lambda gaps: "".join(token + gap for token, gap in zip(tokens, gaps, strict=True))
    )
)
# Read-only commands that can be followed by more code: no comment, no heredoc, no popd (after which the
# directory, and so where relative paths point, is unknown).
CHAINABLE = [c for c in READ_ONLY if "#" not in c and "\n" not in c and "popd" not in c]
SIMPLE = [c for c in CHAINABLE if not any(mark in c for mark in ";&|(){}<>[$")]


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_any_text_gets_an_answer(workspace: Workspace, text: str):
    result = classify(text, workspace)
    assert result.kind in SEVERITY
    assert_consistent(result)


@settings(max_examples=300, deadline=None)
@given(SHELLISH)
def test_shell_like_text_gets_a_consistent_answer(workspace: Workspace, command: str):
    result = classify(command, workspace)
    assert_consistent(result)
    assert result.parsed or result.kind != "read-only"


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CHAINABLE), st.sampled_from(DESTRUCTIVE))
def test_a_destructive_command_stays_destructive_in_any_company(workspace: Workspace, safe: str, bad: str):
    for combined in (
        f"{safe} && {bad}",
        f"{safe}; {bad}",
        f"{safe} | {bad}",
        f"({bad})",
        f"bash -c {shlex.quote(bad)}",
    ):
        assert classify(combined, workspace).kind == "destructive", combined


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(SIMPLE), st.sampled_from(DESTRUCTIVE))
def test_a_destructive_substitution_makes_the_command_destructive(workspace: Workspace, safe: str, bad: str):
    assert classify(f"{safe} $({bad})", workspace).kind == "destructive"


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(CHAINABLE), st.sampled_from(CHAINABLE))
def test_two_read_only_commands_are_read_only(workspace: Workspace, first: str, second: str):
    assert classify(f"{first} && {second}", workspace).kind == "read-only"
