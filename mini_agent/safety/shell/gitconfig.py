"""git configuration that runs commands: `-c core.pager=...`, aliases stored by `git config`, `core.hooksPath`,
the programs `clone -u` / `push --receive-pack` run, and those the repository's own `.git/config` names.

`git -c core.pager='...' log` runs the pager value as shell code, `git config alias.c 'clean -fdx'` makes a
later `git c` delete untracked files, `core.hooksPath` makes git run the scripts of any folder: the values are
returned as scripts to check like any other command line (an alias without `!` as the git command it stands for).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
from pathlib import Path

from mini_agent.safety import gitrepo
from mini_agent.safety.shell import argv
from mini_agent.safety.shell.git import Invocation, invocation
from mini_agent.safety.shell.paths import Place
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


# git's own commands: any other subcommand may be an alias, looked up in the command line and the config files.
BUILTINS = set(
    "add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore checkout "
    "cherry cherry-pick citool clean clone commit config count-objects describe diff diff-files diff-index "
    "diff-tree difftool fetch filter-branch for-each-ref format-patch fsck gc grep gui hash-object help init "
    "log ls-files ls-remote ls-tree maintenance merge merge-base mergetool mv name-rev notes pull push "
    "range-diff rebase reflog remote repack replace reset restore rev-list rev-parse revert rm shortlog show "
    "show-branch show-ref sparse-checkout stash status submodule switch tag update-index update-ref "
    "verify-commit whatchanged worktree version lfs".split()
)
HOME_CONFIG_FILES = (".gitconfig", ".config/git/config")


def defined_aliases(arguments: tuple[Word, ...]) -> dict[str, str | None]:
    """Aliases this git command defines (`git config alias.c clean`, `git -c alias.c=clean ...`)."""
    git = invocation(arguments)
    found: dict[str, str | None] = {}
    for setting in git.configs:
        key, _, value = (setting.value or "").partition("=")
        if key.lower().startswith("alias."):
            found[key[6:]] = value if setting.value is not None else None
    if git.subcommand is not None and git.subcommand.value == "config":
        operands = _config_operands(git.arguments)
        if operands and operands[0].value in ("set", "add"):
            operands = operands[1:]
        if len(operands) >= 2 and (operands[0].value or "").lower().startswith("alias."):
            found[(operands[0].value or "")[6:]] = operands[1].value
    return found


def alias_run(arguments: tuple[Word, ...], known: dict[str, str | None], place: Place) -> Word | None:
    """What `git NAME ...` runs when NAME is an alias: set earlier in this command line, or in the project's
    or the user's git config. Returned as shell code (`!...` aliases) or as the git command it stands for."""
    git = invocation(arguments)
    name = git.subcommand.value if git.subcommand is not None else None
    if name is None or name in BUILTINS:
        return None
    value = known[name] if name in known else _configured(name, place)
    if value is None:
        return Word(name, None) if name in known else None
    rest = [word.value for word in git.arguments]
    tail = "" if any(v is None for v in rest) else " ".join(shlex.quote(v or "") for v in rest)
    if any(v is None for v in rest):
        return Word(f"git {name} ...", None)
    code = value[1:] if value.startswith("!") else f"git {value}"
    return Word(f"git {name}", f"{code} {tail}".strip())


def _configured(name: str, place: Place) -> str | None:
    """An alias stored in the repository's config (found from where the shell is, or from the project root)
    or in the user's own git config files."""
    view = place.workspace
    files = [*_config_files(view.cwd or view.root), *_config_files(view.root)]
    files += [view.home / path for path in HOME_CONFIG_FILES]
    wanted = f"alias.{name.lower()}"
    for path in dict.fromkeys(files):
        for key, value in _entries(path):
            if key.lower() == wanted and value is not None:
                return value
    return None


# Aliases are checked where they are used; pagers never run under the bash tool (output is a pipe, GIT_PAGER=cat).
UNUSED_HERE = ("alias.", "pager.", "core.pager")
SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]')


def repository_scripts(place: Place, arguments: tuple[Word, ...] = ()) -> list[Word]:
    """Programs the repository's own config makes git run: `core.fsmonitor` runs on `git status`, filter
    drivers and textconv on `git diff`. A downloaded or unpacked project chooses them, so a "read-only" git
    command there runs whatever they say: each is returned as a script to check (`core.fsmonitor = true` stays
    harmless). The config files are those git itself reads for this command: found from `-C` and `--git-dir`,
    through a `.git` pointer file and `commondir`, with the worktree's config.worktree and every included file.
    The user's own ~/.gitconfig is theirs, and is not read here."""
    files = _command_config_files(arguments, place)
    if files is None:
        return [Word("git --git-dir or -C computed at run time", None)]
    found: list[Word] = []
    for path in files:
        for key, value in _entries(path):
            if not key.startswith(UNUSED_HERE) and COMMAND_KEYS.fullmatch(key.lower()):
                found.append(Word(f"{key} in {path}", "true" if value is None else value))
    return found


def _command_config_files(arguments: tuple[Word, ...], place: Place) -> list[Path] | None:
    """The repository config files (includes followed) a git command line reads; None when `-C` or `--git-dir`
    is only known at run time."""
    view = place.workspace
    start, git = view.cwd or view.root, None
    index = 0
    while index < len(arguments):
        text = arguments[index].value
        if text is None or not text.startswith("-"):
            break
        name, equals, value = text.partition("=")
        if name in ("-C", "--git-dir") and not equals:
            index += 1
            value = arguments[index].value if index < len(arguments) else ""
        if name in ("-C", "--git-dir"):
            if value is None:
                return None
            target = Path(os.path.realpath(start / os.path.expanduser(value)))
            if name == "-C":
                start = target
            else:
                git = target
        index += 1
    if git is not None:
        return _with_includes(list(gitrepo.repository_config_files(git)))
    return _config_files(start)


def _config_files(start: Path) -> list[Path]:
    return _with_includes(list(gitrepo.config_files(start)))


def _with_includes(files: list[Path]) -> list[Path]:
    """The files and, depth first as git reads them, what each includes (up to git's nesting limit)."""
    found: list[Path] = []

    def add(path: Path, depth: int) -> None:
        if path in found or depth > gitrepo.INCLUDE_DEPTH:
            return
        found.append(path)
        for included in gitrepo.includes(path, _entries(path)):
            add(included, depth + 1)

    for path in files:
        add(path, 0)
    return found


def _entries(path: Path) -> tuple[tuple[str, str | None], ...]:
    """A git config file as (section.key, value) pairs, value None for a bare key; read again only when the
    file changed (every git command of every bash call asks)."""
    try:
        info = path.stat()
    except OSError:
        return ()
    return _parsed(str(path), (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino))


@functools.lru_cache(maxsize=16)
def _parsed(path: str, stamp: tuple[int, ...]) -> tuple[tuple[str, str | None], ...]:
    text = gitrepo.read_text(Path(path))
    if text is None:
        return ()
    found: list[tuple[str, str | None]] = []
    section = ""
    for line in text.splitlines():
        entry = line.strip()
        if not entry or entry[0] in "#;":
            continue
        if entry.startswith("["):
            match = SECTION.match(entry)
            section = f"{match[1].lower()}{'' if match[2] is None else '.' + match[2]}" if match else "?"
            entry = entry[match.end() :].strip() if match else ""
            if not entry:
                continue
        key, assigned, value = entry.partition("=")
        found.append((f"{section}.{key.strip().lower()}", value.strip().strip('"') if assigned else None))
    return tuple(found)
