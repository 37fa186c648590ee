"""Custom slash commands: finding the files, front matter, substitution, precedence, and what a command's turn
may do (its model, its allowed-tools), against real files and the loopback model."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import scripted_agent
from support.fake_api import answer, tool_use

from mini_agent.app.custom_commands import REPL_BUILTINS, one_shot_prompt
from mini_agent.commands.catalog import CommandFinder, expand
from mini_agent.commands.files import read_command, split_front_matter
from mini_agent.commands.turn import command_turn
from mini_agent.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def dirs(tmp_path):
    """A project (a git repository), a user config dir and a home, all real directories."""
    project, user, home = tmp_path / "project", tmp_path / "user", tmp_path / "home"
    for directory in (project / ".git", user, home):
        directory.mkdir(parents=True)
    return project, user, home


def finder(dirs, reserved=()) -> CommandFinder:
    project, user, home = dirs
    return CommandFinder(cwd=project, user_dir=user, home=home, reserved=reserved)


# ---- substitution -------------------------------------------------------------------------------------------


def test_arguments_and_positionals_are_put_in():
    assert expand("Fix issue $ARGUMENTS now", "42 in the parser") == "Fix issue 42 in the parser now"
    assert expand("Review PR #$1 with priority $2", "456 high") == "Review PR #456 with priority high"
    assert expand("first=$1 all=$ARGUMENTS", '"two words" three') == 'first=two words all="two words" three'


def test_missing_positionals_become_nothing_and_other_dollars_stay():
    assert expand("a=$1 b=$2 c=$3.", "x") == "a=x b= c=."
    assert expand("echo $HOME costs $$5 and $ alone", "") == "echo $HOME costs $5 and $ alone"
    assert expand("price $$1", "x") == "price $1\n\nARGUMENTS: x"


def test_a_body_without_placeholders_still_gets_the_arguments():
    assert expand("Summarise the changes.", "") == "Summarise the changes."
    assert expand("Summarise the changes.\n", "only src/") == "Summarise the changes.\n\nARGUMENTS: only src/"


def test_an_unbalanced_quote_splits_on_spaces_instead_of_failing():
    assert expand("$1|$2", "it's fine") == "it's|fine"


@given(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=60), st.text(max_size=40))
def test_a_body_without_dollars_is_kept_whole(body, arguments):
    text = expand(body, arguments)
    assert text.startswith(body.rstrip())
    assert text == body or text.endswith(f"ARGUMENTS: {arguments.strip()}")


@given(st.lists(st.from_regex(r"[A-Za-z0-9_.-]{1,8}", fullmatch=True), min_size=1, max_size=5))
def test_positional_n_is_the_nth_word(words):
    body = " ".join(f"[${index}]" for index in range(1, len(words) + 2))
    expected = " ".join(f"[{word}]" for word in words) + " []"
    assert expand(body, " ".join(words)) == expected


# ---- front matter -------------------------------------------------------------------------------------------


def test_front_matter_fields_and_body(tmp_path):
    path = write(
        tmp_path / "review.md",
        "---\n"
        "description: Review a pull request\n"
        "argument-hint: [pr-number] [priority]\n"
        'model: "claude-haiku-4-5"\n'
        "allowed-tools: Bash(gh pr view:*), bash(git diff *), read_file\n"
        "---\n"
        "Review PR #$1.\n",
    )
    command = read_command(path, "/review", "user")
    assert command.body == "Review PR #$1.\n"
    assert command.description == "Review a pull request"
    assert command.argument_hint == "[pr-number] [priority]"
    assert command.model == "claude-haiku-4-5"
    assert [rule.text for rule in command.rules.rules] == ["bash(gh pr view *)", "bash(git diff *)", "read_file"]
    assert all(rule.effect == "allow" and rule.origin.kind == "user" for rule in command.rules.rules)
    assert command.problems == ()


def test_block_lists_and_comments_are_read():
    fields, body, problems = split_front_matter("---\n# a note\nallowed-tools:\n  - bash(make *)\n  - Read\n---\nGo")
    assert fields == {"allowed-tools": ["bash(make *)", "Read"]} and body == "Go" and problems == []


def test_without_front_matter_the_first_line_describes_it(tmp_path):
    command = read_command(write(tmp_path / "t.md", "# Run the tests\n\nand fix failures"), "/t", "project")
    assert command.description == "Run the tests"
    assert command.body.startswith("# Run the tests")


def test_bad_front_matter_is_one_line_naming_the_file_and_the_body_still_works(tmp_path):
    path = write(tmp_path / "bad.md", "---\ndescription: fine\nthis is not a field\ncolour: blue\n---\nDo $1.\n")
    command = read_command(path, "/bad", "project")
    assert command.body == "Do $1.\n" and command.description == "fine"
    assert len(command.problems) == 2
    assert all(str(path) in problem and "\n" not in problem for problem in command.problems)
    assert "line 3" in command.problems[0] and "colour" in command.problems[1]
    unclosed = read_command(write(tmp_path / "open.md", "---\ndescription: x\nBody"), "/open", "project")
    assert unclosed.body == "---\ndescription: x\nBody" and "no closing ---" in unclosed.problems[0]


def test_an_allowed_tools_entry_that_is_no_rule_is_left_out_and_reported(tmp_path):
    path = write(tmp_path / "x.md", "---\nallowed-tools: Teleport, bash(ls *), nonsense((\n---\nx")
    command = read_command(path, "/x", "project")
    assert [rule.text for rule in command.rules.rules] == ["bash(ls *)"]
    assert len(command.problems) == 2 and all(str(path) in problem for problem in command.problems)


# ---- finding and precedence ---------------------------------------------------------------------------------


def test_where_commands_come_from_and_who_wins(dirs):
    project, user, home = dirs
    write(user / "commands" / "deploy.md", "user deploy")
    write(user / "commands" / "only-user.md", "from the user")
    write(home / ".claude" / "commands" / "only-user.md", "from claude home, hidden by the user dir")
    write(home / ".claude" / "commands" / "legacy.md", "from claude home")
    write(project / ".mini-agent" / "commands" / "deploy.md", "project deploy")
    write(project / ".claude" / "commands" / "deploy.md", "claude project deploy, hidden")
    write(project / ".claude" / "commands" / "fmt.md", "claude project fmt")
    write(project / ".mini-agent" / "commands" / "frontend" / "build.md", "build the frontend")
    commands = finder(dirs).commands()
    assert {name: command.body for name, command in commands.items()} == {
        "/deploy": "project deploy",
        "/frontend:build": "build the frontend",
        "/fmt": "claude project fmt",
        "/only-user": "from the user",
        "/legacy": "from claude home",
    }
    assert commands["/deploy"].scope == "project" and commands["/legacy"].scope == "user"


def test_commands_are_found_from_a_subdirectory_up_to_the_repository_root(dirs, tmp_path):
    project, user, home = dirs
    write(project / ".mini-agent" / "commands" / "root.md", "at the root")
    write(tmp_path / ".mini-agent" / "commands" / "above.md", "above the repository: not this project's")
    nested = project / "src" / "pkg"
    nested.mkdir(parents=True)
    names = set(CommandFinder(cwd=nested, user_dir=user, home=home).commands())
    assert "/root" in names and "/above" not in names
    (project / ".git").rmdir()  # outside any repository only the working directory's own commands count
    assert set(CommandFinder(cwd=project, user_dir=user, home=home).commands()) == {"/root"}
    assert set(CommandFinder(cwd=nested, user_dir=user, home=home).commands()) == set()


def test_a_built_in_name_wins_and_the_file_is_warned_about_once(dirs):
    project, _, _ = dirs
    path = write(project / ".mini-agent" / "commands" / "help.md", "not the help")
    found = finder(dirs, reserved=("/help",))
    assert "/help" not in found.commands() and found.find("/help") is None
    warnings = found.shadowed()
    assert warnings == [f"{path}: /help is a built-in command, which wins over this file."]
    assert found.shadowed() == []


def test_the_repl_builtins_list_matches_the_repls_own_table():
    from mini_agent.app.repl_commands import builtin_commands

    assert sorted(name for name, _ in builtin_commands(repl=None).names()) == sorted(REPL_BUILTINS)


def test_files_are_read_again_only_when_they_change(dirs):
    project, _, _ = dirs
    path = write(project / ".mini-agent" / "commands" / "t.md", "first")
    found = finder(dirs)
    first = found.find("/t")
    assert first.prompt == "first" and found.find("/t").command is first.command  # cached: the same object
    path.write_text("second, longer")
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    assert found.find("/t").prompt == "second, longer"
    path.unlink()
    assert found.find("/t") is None


def test_nothing_is_read_before_it_is_asked_for(dirs, monkeypatch):
    project, _, _ = dirs
    write(project / ".mini-agent" / "commands" / "t.md", "x")
    opened = []
    monkeypatch.setattr(Path, "read_bytes", lambda self: opened.append(self) or b"x")
    found = finder(dirs)
    assert opened == []
    found.commands()
    assert [path.name for path in opened] == ["t.md"]


# ---- what a command's turn may do ----------------------------------------------------------------------------


def build_agent(api, settings, questions):
    from mini_agent.safety.permissions import Deny

    def confirm(request):
        questions.append(request.arguments.get("command"))
        return Deny("The user said no.")

    return scripted_agent(settings, confirm=confirm)


def test_allowed_tools_let_that_turn_run_the_named_commands_without_asking(api, settings_for, tmp_path):
    command = read_command(
        write(tmp_path / "mk.md", "---\nallowed-tools: bash(touch *)\nmodel: claude-other\n---\nMake $1"),
        "/mk",
        "user",
    )
    api.script(
        answer(tool_use("bash", {"command": "touch made.txt"}, id="a"), tool_use("bash", {"command": "mkdir d"})),
        answer("Made one."),
        answer(tool_use("bash", {"command": "touch again.txt"})),
        answer("Asked."),
    )
    questions: list = []
    agent = build_agent(api, settings_for(api), questions)
    with command_turn(agent, command):
        agent.run_turn("Make made.txt")
    assert (tmp_path / "made.txt").exists() and not (tmp_path / "d").exists()
    assert questions == ["mkdir d"]  # outside the command's rules: asked (and refused here)
    assert api.message_requests[0]["model"] == "claude-other"
    agent.run_turn("touch again")  # the next turn: the command's rules and model are gone
    assert questions == ["mkdir d", "touch again.txt"] and not (tmp_path / "again.txt").exists()
    assert api.message_requests[2]["model"] == "claude-test"
    assert agent.gate.rules.rules == ()


def test_deny_rules_still_win_over_a_commands_allowed_tools(api, settings_for, tmp_path):
    from mini_agent.safety.rules import Origin, Rules, parse_rule

    command = read_command(write(tmp_path / "c.md", "---\nallowed-tools: bash(touch *)\n---\nx"), "/c", "user")
    deny = Rules((parse_rule("bash(touch secret*)", "deny", Origin("user", "config.toml")),))
    api.script(answer(tool_use("bash", {"command": "touch secret.txt"})), answer("Denied."))
    questions: list = []
    agent = build_agent(api, settings_for(api, rules=deny), questions)
    with command_turn(agent, command):
        agent.run_turn("x")
    result = api.message_requests[1]["messages"][-1]["content"][0]
    assert result["is_error"] and "denied by the rule" in result["content"]
    assert questions == [] and not (tmp_path / "secret.txt").exists()


def test_one_shot_prompt_expands_and_carries_the_commands_settings(settings_for, api, tmp_path):
    write(tmp_path / ".mini-agent" / "commands" / "fix.md", "---\nmodel: m2\nallowed-tools: bash(make *)\n---\nFix $1")
    settings = settings_for(api, trust_project_rules=True)
    prompt, changed = one_shot_prompt("/fix 42", settings)
    assert prompt == "Fix 42" and changed.model == "m2"
    assert [rule.text for rule in changed.rules.rules] == ["bash(make *)"]
    untrusted = settings_for(api)  # a project's allowed-tools wait for the human's trust (tests/test_planted.py)
    assert one_shot_prompt("/fix 42", untrusted, err=io.StringIO())[1].rules.rules == ()
    with pytest.raises(ConfigError, match="No command /nothing"):  # never a paid request (tests/app/test_habits.py)
        one_shot_prompt("/nothing here", settings)
    assert one_shot_prompt("/tmp is full", settings) == ("/tmp is full", settings)  # a path, not a name
    assert one_shot_prompt("plain", settings) == ("plain", settings)


@pytest.mark.e2e
def test_p_with_a_command_sends_the_expanded_text_and_its_rules_apply(run_cli, api, tmp_path):
    write(
        tmp_path / ".mini-agent" / "commands" / "mk.md",
        "---\ndescription: make files\nallowed-tools: bash(touch *)\nbogus line\n---\nCreate the file $1 please.",
    )
    api.script(
        answer(tool_use("bash", {"command": "touch made.txt"}, id="a"), tool_use("bash", {"command": "mkdir d"})),
        answer("Done."),
    )
    done = run_cli(["-p", "/mk made.txt", "--trust-project-rules"], api)  # default mode, no terminal: asks refused
    assert done.returncode == 4, done.stderr  # the mkdir outside the allowed tools was refused
    first = api.message_requests[0]["messages"][0]["content"]
    assert any(block.get("text") == "Create the file made.txt please." for block in first)
    assert (tmp_path / "made.txt").exists() and not (tmp_path / "d").exists()
    made, refused = api.message_requests[1]["messages"][-1]["content"]
    assert not made.get("is_error") and refused["is_error"]
    warning = [line for line in done.stderr.decode().splitlines() if "mk.md" in line]
    assert len(warning) == 1 and warning[0].startswith("mini-agent: ") and "line 4" in warning[0]


def test_in_the_repl_tab_completes_a_command_help_lists_it_and_it_reaches_the_model(api, tmp_path):
    from support.repl import finish, spawn

    write(
        tmp_path / ".mini-agent" / "commands" / "frontend" / "greet.md",
        "---\ndescription: greet someone\nargument-hint: <name> [mood]\n---\nSay hello to $1, feeling $2 ($ARGUMENTS).",
    )
    write(tmp_path / ".mini-agent" / "commands" / "undo.md", "not the real undo")
    api.script(answer("Hello, Ada."))
    child = spawn(api, tmp_path)
    child.expect("›")
    child.sendline("/help")
    child.expect(r"/frontend:greet <name> \[mood\]\s+greet someone \(project\)")
    child.expect(r"undo\.md: /undo is a built-in")  # the line may wrap after this
    child.expect("›")
    child.send("/fronte\t")
    child.expect("/frontend:greet")
    child.send(" Ada cheerful\r")
    child.expect("Hello, Ada.")
    child.expect("›")
    child.sendcontrol("d")
    assert finish(child) == 0
    typed = [
        block["text"]
        for block in api.message_requests[0]["messages"][-1]["content"]
        if not block["text"].startswith("<context")
    ]
    assert typed == ["Say hello to Ada, feeling cheerful (Ada cheerful)."]


def test_help_puts_custom_commands_descriptions_in_one_column_with_the_built_ins(dirs):
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from mini_agent.app.custom_commands import CustomCommands
    from mini_agent.app.repl_commands import builtin_commands

    write(dirs[0] / ".mini-agent" / "commands" / "go.md", "---\ndescription: go somewhere\n---\nGo.")
    console = Console(file=io.StringIO(), width=200)
    repl = SimpleNamespace(console=console)
    repl.commands = builtin_commands(repl)
    repl.custom = CustomCommands(finder(dirs))
    repl.commands.find("/help")[0].run("")
    lines = console.file.getvalue().splitlines()
    clear = next(line for line in lines if line.startswith("/clear "))
    custom = next(line for line in lines if line.startswith("/go "))
    assert clear.index("start a new conversation") == custom.index("go somewhere (project)")
