"""git configuration that runs commands: `-c core.pager=...`, aliases stored by `git config`, `core.hooksPath`,
and the programs `clone -u` / `push --receive-pack` run.

`git -c core.pager='...' log` runs the pager value as shell code, `git config alias.c 'clean -fdx'` makes a
later `git c` delete untracked files, `core.hooksPath` makes git run the scripts of any folder: the values are
returned as scripts to check like any other command line (an alias without `!` as the git command it stands for).
"""

from __future__ import annotations

import re

from mini_agent.safety.shell import argv
from mini_agent.safety.shell.git import Invocation, invocation
from mini_agent.safety.shell.verdict import Verdict, destructive
from mini_agent.safety.shell.words import Word

# Configuration whose value git runs as a shell command (a leading `!` marks shell code in aliases).
COMMAND_KEYS = re.compile(
    r"core\.(pager|editor|sshcommand|fsmonitor|askpass)|pager\..+|alias\..+|diff\.external|diff\..+\.(textconv|command)"
    r"|merge\..+\.driver|filter\..+\.(clean|smudge|process)|credential(\..+)?\.helper|sequence\.editor"
    r"|gpg(\..+)?\.program|uploadpack\.packobjectshook|core\.gitproxy|sendemail\..*cmd",
)
CONFIG_VALUES = {"-f", "--file", "--blob", "--type", "--default", "--comment", "--value"}
# Options of clone, fetch, push, ls-remote and archive whose value git runs as a shell command.
PROGRAM_OPTIONS = {"--upload-pack", "-u", "--receive-pack", "--exec"}


def scripts(arguments: tuple[Word, ...]) -> list[Word]:
    """Shell code that git's configuration on this command line would run, or that `git config` stores for
    later (`git config alias.x '!rm -rf ~'`)."""
    git = invocation(arguments)
    found = []
    if git.subcommand is not None and git.subcommand.value == "config":
        operands = _config_operands(git.arguments)
        if operands and operands[0].value in ("set", "add"):
            operands = operands[1:]
        if len(operands) >= 2 and COMMAND_KEYS.fullmatch((operands[0].value or "").lower()):
            found.append(_code((operands[0].value or "").lower(), operands[1]))
    for setting in git.configs:
        key, _, value = (setting.value or "").partition("=")
        if setting.value is None:
            found.append(Word(setting.text, None))
        elif COMMAND_KEYS.fullmatch(key.lower()):
            found.append(_code(key.lower(), Word(setting.text, value)))
    found += [Word(f"--config-env={key}", None) for key in git.from_environment if COMMAND_KEYS.fullmatch(key.lower())]
    if git.subcommand is not None and git.subcommand.value in (
        "clone",
        "fetch",
        "pull",
        "push",
        "ls-remote",
        "archive",
    ):
        found += argv.parse(git.arguments, PROGRAM_OPTIONS).value(*PROGRAM_OPTIONS)
    return found


def _config_operands(arguments: tuple[Word, ...]) -> list[Word]:
    """`git config`'s operands, without the values of its options (`--file .git/config`)."""
    operands: list[Word] = []
    skip = False
    for word in arguments:
        value = word.value or ""
        if skip:
            skip = False
        elif value in CONFIG_VALUES:
            skip = True
        elif not value.startswith("-"):
            operands.append(word)
    return operands


def _code(key: str, value: Word) -> Word:
    """The shell code a command-valued setting runs: an alias without `!` runs git itself (`clean -fdx`)."""
    text = value.value
    if text is not None and text.startswith("!"):
        return Word(value.text, text[1:])
    if key.startswith("alias.") and text is not None:
        return Word(value.text, "git " + text)
    return value


def hooks(git: Invocation) -> list[Verdict]:
    """`core.hooksPath` set on the command line or stored: git then runs whatever scripts that folder holds."""
    keys = [(setting.value or "").partition("=")[0].lower() for setting in git.configs]
    if git.subcommand is not None and git.subcommand.value == "config":
        keys += [(word.value or "").lower() for word in git.arguments if not (word.value or "").startswith("-")]
    if "core.hookspath" in keys:
        return [destructive("core.hooksPath makes git run the scripts of another folder as hooks")]
    return []
