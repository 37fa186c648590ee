"""Permission rules: the written syntax, what each pattern matches, and loading them from config files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mini_agent.cli.config import resolve
from mini_agent.config_files import project_config, rules_in
from mini_agent.errors import ConfigError
from mini_agent.safety.rules import CLAUDE_WITHOUT_COUNTERPART, Origin, Rule, parse_rule, parse_rules

FLAG = Origin("flag", "--allow")
ROOT, HOME = Path("/work/repo"), Path("/home/u")


def rule(text: str, effect: str = "allow", origin: Origin = FLAG) -> Rule:
    return parse_rule(text, effect, origin)


@pytest.mark.parametrize(
    ("text", "tool", "pattern"),
    [
        ("bash", "bash", None),
        ("bash(npm test)", "bash", "npm test"),
        ("  bash( git log * )  ", "bash", "git log *"),
        ("edit_file(src/**)", "edit_file", "src/**"),
        ("web_fetch(docs.python.org)", "web_fetch", "docs.python.org"),
        ("bash(echo (nested))", "bash", "echo (nested)"),
    ],
)
def test_the_written_form(text, tool, pattern):
    parsed = rule(text)
    assert (parsed.tool, parsed.pattern) == (tool, pattern)
    assert parse_rule(parsed.text, "allow", FLAG) == parsed


@pytest.mark.parametrize("text", ["", "bash(", "bash()", "BASH(ls)", "rm(-rf)", "bash ls", "(ls)", "bash(x) extra"])
def test_malformed_rules_are_config_errors_that_say_the_syntax(text):
    with pytest.raises(ConfigError) as error:
        rule(text)
    assert repr(text) in str(error.value) and "--allow" in str(error.value)


@pytest.mark.parametrize(
    ("pattern", "command", "expected"),
    [
        ("npm test", "npm test", True),
        ("npm test", "npm test --watch", False),
        ("npm test", "npm  test", True),
        ("git log *", "git log", True),
        ("git log *", "git log --oneline -5", True),
        ("git log *", "git logs", False),
        ("git log *", "git", False),
        ("git * --stat", "git diff HEAD --stat", True),
        ("git * --stat", "git diff --stat --cached", False),
        ("make*", "makers", True),
        ("rm -f *.o", "rm -f a.o", True),
        ("rm -f *.o", "rm -f a.c", False),
    ],
)
def test_command_patterns(pattern, command, expected):
    assert rule(f"bash({pattern})").matches_command(command) is expected


def test_a_bare_tool_matches_everything_of_that_tool_only():
    bare = rule("bash")
    assert bare.matches_command("anything at all")
    assert not bare.matches_path("edit_file", ROOT / "x", ROOT, HOME)
    assert not rule("read_file").matches_path("edit_file", ROOT / "x", ROOT, HOME)
    assert rule("edit_file").matches_path("edit_file", Path("/etc/passwd"), ROOT, HOME)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/**", ROOT / "src/a.py", True),
        ("src/**", ROOT / "src/deep/er/a.py", True),
        ("src/**", ROOT / "srcx/a.py", False),
        ("src/*.py", ROOT / "src/a.py", True),
        ("src/*.py", ROOT / "src/sub/a.py", False),
        ("src/**/*.py", ROOT / "src/a.py", True),
        ("src/**/*.py", ROOT / "src/sub/a.py", True),
        ("./docs/", ROOT / "docs/x/y.md", True),
        ("README.md", ROOT / "README.md", True),
        ("README.md", ROOT / "sub/README.md", False),
        ("**/README.md", ROOT / "sub/README.md", True),
        ("~/notes/*", HOME / "notes/today.md", True),
        ("/tmp/out/**", Path("/tmp/out/a/b"), True),
        ("/tmp/out/**", Path("/tmp/outside"), False),
    ],
)
def test_path_patterns(pattern, path, expected):
    assert rule(f"edit_file({pattern})").matches_path("edit_file", path, ROOT, HOME) is expected


@pytest.mark.parametrize(
    ("pattern", "url", "expected"),
    [
        ("docs.python.org", "https://docs.python.org/3/", True),
        ("docs.python.org", "https://python.org/", False),
        ("docs.python.org", "https://evil.com/docs.python.org", False),
        ("*.python.org", "https://docs.python.org/x", True),
        ("*.python.org", "https://python.org/x", True),
        ("*.python.org", "https://notpython.org/x", False),
        ("https://example.com/api/*", "https://example.com/api/v1", True),
        ("https://example.com/api/*", "https://example.com/other", False),
        ("LOCALHOST", "http://localhost:8000/", True),
    ],
)
def test_fetch_patterns(pattern, url, expected):
    from urllib.parse import urlsplit

    assert rule(f"web_fetch({pattern})").matches_url(url, urlsplit(url).hostname) is expected


@given(st.text(max_size=40))
def test_a_command_pattern_without_wildcards_matches_exactly_itself(text):
    text = " ".join(text.replace("*", "").replace("(", "").replace(")", "").split())
    if not text:
        return
    exact = Rule("allow", "bash", text)
    assert exact.exact and exact.matches_command(text)
    assert not exact.matches_command(text + " more")


def test_exact_rules_are_those_naming_one_thing():
    assert rule("bash(git push --force origin main)").exact
    assert not rule("bash(git push *)").exact
    assert not rule("bash").exact
    assert not rule("edit_file(src/)").exact


def test_config_files_give_rules_with_their_origin(tmp_path):
    user_dir, project = tmp_path / "user", tmp_path / "repo"
    (user_dir).mkdir()
    (project / ".mini-agent").mkdir(parents=True)
    (project / ".git").mkdir()
    (user_dir / "config.toml").write_text('[permissions]\ndeny = ["bash(git push *)"]\nallow = ["bash(npm test)"]\n')
    (project / ".mini-agent" / "config.toml").write_text(
        '[permissions]\nallow = ["bash(git push *)", "edit_file(src/**)"]\n'
    )
    (project / "sub").mkdir()
    env = {"MINI_AGENT_HOME": str(user_dir)}
    rules = resolve(env, {}, cwd=project / "sub", allow=["bash(make)"], deny=["web_fetch"]).settings.rules
    listed = [(r.effect, r.text, r.origin.kind) for r in rules.rules]
    assert listed == [
        ("deny", "bash(git push *)", "user"),
        ("allow", "bash(npm test)", "user"),
        ("allow", "bash(git push *)", "project"),
        ("allow", "edit_file(src/**)", "project"),
        ("allow", "bash(make)", "flag"),
        ("deny", "web_fetch", "flag"),
    ]
    assert str(user_dir / "config.toml") in str(rules.rules[0].origin)


def test_the_project_config_is_looked_for_up_to_the_repository_root(tmp_path):
    outer = tmp_path / "outer"
    (outer / ".mini-agent").mkdir(parents=True)
    (outer / ".mini-agent" / "config.toml").write_text("")
    repo = outer / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    assert project_config(repo / "a" / "b") is None  # the repository's root ends the search
    (repo / ".mini-agent").mkdir()
    (repo / ".mini-agent" / "config.toml").write_text("")
    assert project_config(repo / "a" / "b") == repo / ".mini-agent" / "config.toml"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[permissions\n", "not valid TOML"),
        ("permissions = 3\n", "must be a table"),
        ("[permissions]\nallow = 3\n", "must be a list of strings"),
        ("[permissions]\nalow = []\n", "Unknown key 'alow'"),
        ('[permissions]\ndeny = ["bash("]\n', "is not `tool` or `tool(pattern)`"),
    ],
)
def test_a_broken_config_file_is_a_clear_error_naming_the_file(tmp_path, content, message):
    (tmp_path / "config.toml").write_text(content)
    with pytest.raises(ConfigError) as error:
        resolve({"MINI_AGENT_HOME": str(tmp_path)}, {}, cwd=tmp_path)
    assert message in str(error.value) and str(tmp_path / "config.toml") in str(error.value)


def test_a_single_string_is_one_rule():
    rules = rules_in({"permissions": {"allow": "bash(ls)"}}, Origin("user", "x"))
    assert [r.text for r in rules.rules] == ["bash(ls)"]


# --- Claude Code's spelling means the same here ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("claude", "ours"),
    [
        ("Bash", ["bash"]),
        ("Bash(npm run test:*)", ["bash(npm run test *)"]),
        ("Bash(git log *)", ["bash(git log *)"]),
        ("Read", ["read_file"]),
        ("Read(./src/**)", ["read_file(./src/**)"]),
        ("Read(~/notes/*)", ["read_file(~/notes/*)"]),
        ("Read(//etc/hosts)", ["read_file(/etc/hosts)"]),
        ("Edit(/src/**/*.ts)", ["edit_file(./src/**/*.ts)", "write_file(./src/**/*.ts)"]),
        ("MultiEdit", ["edit_file", "write_file"]),
        ("Write(out/*.txt)", ["write_file(out/*.txt)"]),
        ("WebFetch(domain:docs.python.org)", ["web_fetch(docs.python.org)"]),
        ("WebFetch", ["web_fetch"]),
    ],
)
def test_a_rule_in_claude_code_s_spelling_stands_for_the_same_rules_here(claude, ours):
    assert [parsed.text for parsed in parse_rules(claude, "allow", FLAG)] == ours


@pytest.mark.parametrize(
    ("command", "expected"),
    [("npm run test", True), ("npm run test --watch", True), ("npm run testing", False), ("npm run build", False)],
)
def test_claude_code_s_prefix_form_keeps_the_word_boundary(command, expected):
    assert rule("Bash(npm run test:*)").matches_command(command) is expected


def test_claude_code_s_path_forms_absolute_home_and_project():
    assert rule("Read(//etc/hosts)").matches_path("read_file", Path("/etc/hosts"), ROOT, HOME)
    assert rule("Read(/src/**)").matches_path("read_file", ROOT / "src/a.py", ROOT, HOME)
    assert not rule("Read(/src/**)").matches_path("read_file", Path("/src/a.py"), ROOT, HOME)
    assert rule("Read(~/.aws/**)").matches_path("read_file", HOME / ".aws/credentials", ROOT, HOME)
    edit, write = parse_rules("Edit(docs/)", "deny", FLAG)
    assert edit.matches_path("edit_file", ROOT / "docs/a.md", ROOT, HOME)
    assert write.matches_path("write_file", ROOT / "docs/a.md", ROOT, HOME)


@pytest.mark.parametrize("name", sorted(CLAUDE_WITHOUT_COUNTERPART))
def test_a_claude_code_tool_without_a_counterpart_is_accepted_and_matches_nothing(name):
    kept = rule(f"{name}(anything)", "deny")
    assert kept.tool == name and not kept.matches_command("anything")
    for tool in ("read_file", "write_file", "edit_file"):
        assert not kept.matches_path(tool, ROOT / "anything", ROOT, HOME)
    assert not kept.matches_url("https://anything/", "anything")


def test_claude_code_s_rules_work_in_config_files_and_flags(tmp_path):
    table = {"permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Edit(./secrets/**)"]}}
    rules = rules_in(table, Origin("user", str(tmp_path / "config.toml")))
    assert [r.text for r in rules.rules] == [
        "edit_file(./secrets/**)",
        "write_file(./secrets/**)",
        "bash(npm run test *)",
    ]
    flags = resolve({}, {}, allow=["Read(//opt/data/**)"], deny=["WebFetch(domain:evil.test)"], files=False)
    assert {r.text for r in flags.settings.rules.rules} >= {"read_file(/opt/data/**)", "web_fetch(evil.test)"}
