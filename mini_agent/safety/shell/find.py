"""find: where it starts, what its expression deletes or writes, and the commands `-exec` runs on each match.

A command run by `-exec` is checked as its own part, with `{}` standing for what find can reach: the starting
point itself when nothing narrows the search (`find / -exec rm -rf {} +` removes `/`), or an entry under it
when tests narrow it (`find . -name '*.o' -exec rm {} +` removes `./*.o`, inside the workspace).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mini_agent.safety.shell.paths import Place, broad, write_verdict
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary, read_only
from mini_agent.safety.shell.words import Word, literal

RUNS = {"-exec", "-execdir", "-ok", "-okdir"}
WRITES = {"-fprint", "-fprint0", "-fprintf", "-fls"}
DELETERS = {"rm", "rmdir", "unlink", "shred", "srm", "wipe", "trash", "trash-put", "gio"}
DELETE_SPLIT = re.compile(r"[\s;|&()`'\"]+|\$\(")
TAKES_VALUE = set(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size -mtime -mmin -atime "
    "-amin -ctime -cmin -newer -anewer -cnewer -user -group -perm -maxdepth -mindepth -printf -fstype -inum "
    "-links -samefile -uid -gid -used -lname -ilname -context -regextype -files0-from".split()
)
# Parts of an expression that do not narrow which files are reached.
NOT_FILTERS = set(
    "-depth -d -maxdepth -mindepth -xdev -mount -follow -noleaf -print -print0 -ls -delete -true -regextype "
    "-type -xtype -warn -nowarn -ignore_readdir_race -noignore_readdir_race -daystart -printf -prune "
    "( ) , -a -and -o -or".split()
)


@dataclass
class Plan:
    verdicts: list[Verdict] = field(default_factory=list)
    commands: list[tuple[tuple[Word, ...], tuple[Word, ...]]] = field(default_factory=list)
    """(as written, with `{}` filled in) for each command the expression runs."""
    starts: list[Word] = field(default_factory=list)


def plan(arguments: tuple[Word, ...], place: Place) -> Plan:
    result = Plan()
    index = 0
    while index < len(arguments) and arguments[index].value in ("-H", "-L", "-P", "-D", "-O"):
        index += 2 if arguments[index].value == "-D" else 1
    starts: list[Word] = []
    while index < len(arguments) and not _expression_start(arguments[index]):
        starts.append(arguments[index])
        index += 1
    expression = arguments[index:]
    starts = starts or [literal(".")]
    result.starts = starts
    filtered = _filtered(expression)
    names = _names(expression)
    reached = [_reached(start, filtered, names) for start in starts]
    position = 0
    while position < len(expression):
        word = expression[position]
        position += 1
        if word.value is None:
            result.verdicts.append(ordinary("find's expression is computed at run time, so it cannot be checked"))
        elif word.value in RUNS:
            end = position
            while end < len(expression) and expression[end].value not in (";", "+"):
                end += 1
            written = expression[position:end]
            if _deletes(written):
                result.verdicts.append(
                    destructive(f"recursive deletion: find {word.value} runs a deletion on every match")
                )
            result.commands.append((written, _filled(written, [word for words in reached for word in words])))
            position = end + 1
        elif word.value in WRITES and position < len(expression):
            result.verdicts += [v for v in [write_verdict(expression[position], place)] if v is not None]
            position += 1
        elif word.value == "-delete":
            result.verdicts += _deletion(starts, reached, place)
        elif word.value in TAKES_VALUE:
            position += 1
    if not result.verdicts:
        runs = " (the commands it runs are checked on their own)" if result.commands else ""
        result.verdicts.append(read_only(f"read-only: find{runs}"))
    return result


def _deletes(command: tuple[Word, ...]) -> bool:
    """Whether a command run by -exec deletes: rm, rmdir, unlink, shred, also inside `sh -c '...'` or wrappers
    (any word that is, or holds a line of shell starting with, such a name)."""
    for word in command:
        for token in DELETE_SPLIT.split((word.value or "").lower()):
            if token.rsplit("/", 1)[-1] in DELETERS:
                return True
    return False


def fed_to_deletion(command: tuple[Word, ...], upstream: tuple) -> bool:
    """`find . | xargs rm`: a deletion whose operands are what a find upstream prints."""
    finds = any(stage.words and (stage.words[0].value or "").rsplit("/", 1)[-1].lower() == "find" for stage in upstream)
    return finds and _deletes(command[:1])


def _expression_start(word: Word) -> bool:
    return word.value is not None and (word.value.startswith("-") or word.value in ("(", "!", ","))


def _filtered(expression: tuple[Word, ...]) -> bool:
    """Whether a test narrows what is reached (the words of a command run by -exec are not tests)."""
    inside_command = False
    for word in expression:
        if inside_command:
            inside_command = word.value not in (";", "+")
        elif word.value in RUNS:
            inside_command = True
        elif word.value and word.value.startswith("-") and word.value not in NOT_FILTERS:
            return True
    return False


def _names(expression: tuple[Word, ...]) -> list[str]:
    """The patterns of `-name` / `-iname` tests (a dynamic one counts as `*`)."""
    return [
        (expression[index + 1].value or "*")
        for index, word in enumerate(expression[:-1])
        if word.value in ("-name", "-iname")
    ]


def _reached(start: Word, filtered: bool, names: list[str]) -> list[Word]:
    """What `{}` may stand for: the start itself, entries matching the -name patterns under it, or some entry."""
    if not filtered or start.value is None:
        return [start]
    folder = start.value.rstrip("/")
    if names:
        return [Word(start.text, f"{folder}/{name}", glob=True) for name in names]
    return [Word(start.text, folder + "/{}")]


def _filled(command: tuple[Word, ...], reached: list[Word]) -> tuple[Word, ...]:
    filled: list[Word] = []
    for word in command:
        if word.value is None or "{}" not in word.value:
            filled.append(word)
            continue
        for target in reached:
            value = None if target.value is None else word.value.replace("{}", target.value)
            filled.append(Word(word.text, value))
    return tuple(filled)


def _deletion(starts: list[Word], reached: list[list[Word]], place: Place) -> list[Verdict]:
    found = []
    for start, targets in zip(starts, reached, strict=True):
        if any(broad(target, place) for target in targets):
            found.append(destructive(f"find -delete removes everything under a broad target ({start.shown})"))
        verdicts = [write_verdict(target, place, "deletes", entry=True) for target in targets]
        if any(verdict is not None and verdict.kind == "destructive" for verdict in verdicts):
            found.append(destructive(f"find -delete removes files under {start.shown}, where writing is not routine"))
    return found or [ordinary("find -delete deletes the files it matches")]
