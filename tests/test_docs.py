"""The documentation against the program: every `mini-agent ...` command line that README.md, CONTRIBUTING.md and
docs/*.md show names a subcommand that exists and flags that its `--help` lists, and every link between those
files reaches an existing file and heading."""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from mini_agent.cli.main import app

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMAND_START = re.compile(r"(?:^|[|;&]\s*|^\$\s+)mini-agent(?=\s|$)")
INLINE_CODE = re.compile(r"(?<!`)`(mini-agent [^`]+)`(?!`)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
PLACEHOLDER = re.compile(r"^(\.\.\.|…|[A-Z][A-Z_]*|<[^>]*>)$")
ALTERNATIVES = re.compile(r"(?<![^\s])[\w-]+(\|[\w-]+)+(?![^\s])")


def _blocks(text: str) -> tuple[list[str], list[str]]:
    """The lines inside fenced code blocks, and the prose lines outside them."""
    code, prose, fence = [], [], None
    for line in text.splitlines():
        marker = re.match(r"^\s*(```+|~~~+)", line)
        if marker and (fence is None or marker.group(1).startswith(fence)):
            fence = None if fence else marker.group(1)
            continue
        (code if fence else prose).append(line)
    return code, prose


def _command_lines(path: Path) -> list[str]:
    """What follows `mini-agent` in each command the file shows: at a command's start in a code block, or as an
    inline code span of prose."""
    code, prose = _blocks(path.read_text(encoding="utf-8"))
    found = []
    for line in code:
        found += [line[match.end() :] for match in COMMAND_START.finditer(line)]
    for line in prose:
        found += [span[len("mini-agent") :] for span in INLINE_CODE.findall(line.replace("\\|", "|"))]
    return found


def _invocations(rest: str) -> list[list[str]]:
    """The words of one command up to the shell's next operator or comment; `add|remove` is two commands."""
    choices = ALTERNATIVES.search(rest)
    if choices:
        return [
            invocation
            for choice in choices.group(0).split("|")
            for invocation in _invocations(rest[: choices.start()] + choice + rest[choices.end() :])
        ]
    lexer = shlex.shlex(rest, posix=True, punctuation_chars="|;&<>")
    lexer.whitespace_split = True
    words = []
    try:
        for word in lexer:
            if word and set(word) <= set("|;&<>"):
                break
            words.append(word.strip("[]"))
    except ValueError:  # an unclosed quote in an excerpt such as `-p "..."`: what was read so far
        pass
    return [[word for word in words if word]]


def documented_commands() -> list[tuple[str, list[str]]]:
    return [
        (path.relative_to(ROOT).as_posix(), words)
        for path in DOCS
        for rest in _command_lines(path)
        for words in _invocations(rest)
    ]


@functools.cache
def _help(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, (path, result.output)
    return result.output


def _split(words: list[str]) -> tuple[tuple[str, ...], list[str]]:
    """The subcommand path the words name, and the flags given to it (up to `--`, after which words are the
    command's own)."""
    command = typer.main.get_command(app)
    path: list[str] = []
    index = 0
    while index < len(words) and not words[index].startswith("-") and hasattr(command, "commands"):
        name = words[index]
        if PLACEHOLDER.match(name):  # `mini-agent server ...`, `mini-agent mcp COMMAND`
            break
        if name not in command.commands and not path:  # the root's positional prompt: `mini-agent "fix it"`
            break
        if name not in command.commands:  # no subcommand group takes a positional argument
            raise AssertionError(f"`mini-agent {' '.join(words)}`: no subcommand {name!r} under {path or 'mini-agent'}")
        command = command.commands[name]
        path.append(name)
        index += 1
    flags = []
    for word in words[index:]:
        if word == "--":
            break
        if re.match(r"^--?[A-Za-z]", word):
            flags.append(word.split("=", 1)[0])
    return tuple(path), flags


def test_the_docs_show_commands() -> None:
    commands = documented_commands()
    assert len(commands) > 40
    assert any(words[:2] == ["mcp", "add"] for _, words in commands)
    assert any(words[:1] == ["undo"] and "--turns" in words for _, words in commands)


@pytest.mark.parametrize(
    "where, words", documented_commands(), ids=lambda value: " ".join(value)[:60] if isinstance(value, list) else value
)
def test_each_documented_command_and_flag_exists(where: str, words: list[str]) -> None:
    path, flags = _split(words)
    text = _help(path)
    for flag in flags:
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), (
            f"{where}: `mini-agent {' '.join(words)}` uses {flag}, which `mini-agent {' '.join(path)} --help` "
            f"does not list"
        )


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, formatting and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    _, prose = _blocks(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    anchors = set()
    for line in prose:
        heading = re.match(r"^#{1,6} (.+?)\s*#*$", line)
        if heading:
            slug = _slug(heading.group(1))
            anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def documented_links() -> list[tuple[str, str]]:
    links = []
    for path in DOCS:
        _, prose = _blocks(path.read_text(encoding="utf-8"))
        for line in prose:
            for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
                if not re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    links.append((path.relative_to(ROOT).as_posix(), target))
    return links


def test_the_docs_link_to_each_other() -> None:
    links = documented_links()
    assert any("#" in target for _, target in links)
    assert any(where == "README.md" and target.startswith("docs/") for where, target in links)


@pytest.mark.parametrize("where, target", documented_links())
def test_each_link_reaches_a_file_and_heading(where: str, target: str) -> None:
    file_part, _, anchor = target.partition("#")
    destination = (ROOT / where).parent / file_part if file_part else ROOT / where
    assert destination.exists(), f"{where}: the link {target!r} leads to no file"
    if anchor:
        assert destination.suffix == ".md", f"{where}: {target!r} has an anchor into a file that is not Markdown"
        assert anchor in _anchors(destination), f"{where}: {destination.name} has no heading for #{anchor}"
