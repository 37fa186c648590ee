"""Running a file the agent wrote runs what it wrote: scripts, Makefile recipes and package.json scripts.

`./x.sh`, `bash x.sh`, `source x.sh`, `python x.py`, `make TARGET` and `npm run X` (also yarn, pnpm, bun) are
judged by the content they run when that file was written or changed during this session: its ctime is at or
after the session's start (`touch -d` cannot set a ctime back). Files older than the session are the project's
own and keep the ordinary verdict. A file that an earlier part of the same command writes
(`echo 'rm -rf ~' > c.sh && bash c.sh`) cannot be read yet: running it runs code built at run time; so does
running a script that does not exist yet after other parts ran (they may have made it in a way not tracked,
`python -c "open('c.sh','w')..." && bash c.sh`). A missing Makefile or package.json only makes make or npm fail.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from mini_agent.safety.shell import interpreters, makefile
from mini_agent.safety.shell.argv import parse
from mini_agent.safety.shell.commands import Redirect
from mini_agent.safety.shell.paths import Place
from mini_agent.safety.shell.scripts import SHELLS
from mini_agent.safety.shell.verdict import Verdict, destructive
from mini_agent.safety.shell.words import Word

SIZE_LIMIT = 256 * 1024
"""Largest file read; running a bigger one written this session runs code that is not checked."""
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
MAKE_VALUES = {"-f", "--file", "--makefile", "-C", "--directory", "-I", "--include-dir", "-j", "--jobs", "-o", "-W"}
PACKAGE_RUNNERS = {"npm", "yarn", "pnpm", "bun"}
# Subcommands of the package managers that are not scripts (yarn and pnpm run `yarn X` as `yarn run X`).
MANAGER_COMMANDS = set(
    "add remove install i ci uninstall update upgrade link unlink publish pack init create exec dlx x info why "
    "list ls outdated audit config cache login logout version help view whoami dedupe prune rebuild store "
    "import patch bin root".split()
)
DENO_COMMANDS = {"run", "test", "eval", "x", "install", "add", "task", "compile", "fmt", "lint", "repl", "serve"}
LIFECYCLE = {"test": "test", "t": "test", "start": "start", "stop": "stop", "restart": "restart"}
INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare"]


@dataclass
class Ran:
    verdicts: list[Verdict] = field(default_factory=list)
    shell: list[Word] = field(default_factory=list)
    """Shell code from the files, to be checked as scripts."""


def runs(
    first: Word, name: str, arguments: tuple[Word, ...], place: Place, redirects: tuple[Redirect, ...] = ()
) -> Ran | None:
    """What running a session-written file means, or None when no such file is run."""
    if name == "make":
        return _make(arguments, place)
    if name in PACKAGE_RUNNERS:
        return _package(name, arguments, place)
    script: Word | None = None
    language = interpreters.language(name)
    if name in SHELLS or name in ("source", "."):
        language, script = "shell", _first_operand(arguments, stop_at="-c")
    elif language is not None:
        code_flag = "-c" if language == "python" else "-r" if language == "php" else "-e"
        script = _first_operand(arguments, stop_at=code_flag, not_with="-m")
        if language == "python" and script is None:
            script = _module(arguments, place)
        if name in ("deno", "bun") and script is not None and script.value in DENO_COMMANDS:
            script = None
    elif first.value is not None and "/" in first.value:
        language, script = "shell", first
    if script is None and language is not None and not arguments:  # `sh < x.sh`, `python3 < x.py`
        script = next((r.target for r in redirects if r.operator == "<" and r.target is not None), None)
    if script is None:
        return None
    return _file(script, place, language or "shell")


def _module(arguments: tuple[Word, ...], place: Place) -> Word | None:
    """`python -m name`: the module's file in the current directory, when there is one."""
    values = [word.value for word in arguments]
    if "-m" not in values or values.index("-m") + 1 >= len(values):
        return None
    module = (values[values.index("-m") + 1] or "").replace(".", "/")
    for candidate in (f"{module}.py", f"{module}/__main__.py"):
        word = Word(candidate, candidate)
        if module and place.known(word) and place.views(word)[0].resolve(candidate).is_file():
            return word
    return None


def _first_operand(arguments: tuple[Word, ...], stop_at: str, not_with: str | None = None) -> Word | None:
    """The script a shell or interpreter runs: its first operand, unless code comes with -c / -e / -m."""
    skip = False
    for word in arguments:
        value = word.value
        if value is None:
            return None
        if skip:
            skip = False
            continue
        if value in (stop_at, not_with) or (value.startswith("-") and stop_at[1:] in value[1:] and len(value) < 6):
            return None
        if value in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file", "-W", "-X"):
            skip = True
        elif not value.startswith(("-", "+")):
            return word
    return None


def _file(script: Word, place: Place, language: str) -> Ran | None:
    found = _read(script, place)
    if found is None or isinstance(found, Ran):
        return found
    path, text = found
    shebang = text.split("\n", 1)[0] if text.startswith("#!") else ""
    language = next((kind for kind in interpreters.LANGUAGES if kind in shebang.replace("node", "js")), language)
    ran = Ran()
    if language != "shell":
        judged = interpreters.judge(language, text, place)
        ran.verdicts, ran.shell = judged.verdicts, judged.shell
    else:
        ran.shell.append(Word(str(path), text))
    return ran


def _read(word: Word, place: Place, missing_runs: bool = True) -> tuple[Path, str] | Ran | None:
    """The file's text when it was written this session; a destructive Ran when this command writes it first
    (or, with `missing_runs`, when it does not exist yet although other parts of the command run before)."""
    if not place.known(word):
        return None
    path = place.views(word)[0].resolve(word.value or "")
    if path in place.written:
        return _unseen(f"{word.shown} is written by an earlier part of the command")
    try:
        status = os.stat(path)
    except OSError:
        if missing_runs and place.ran_before and not path.exists():
            return _unseen(f"{word.shown} does not exist yet, so an earlier part of the command must make it")
        return None
    if status.st_ctime < place.workspace.session_started or not path.is_file():
        return None
    if status.st_size > SIZE_LIMIT:
        return _unseen(f"{word.shown} was written this session and is too big to check")
    try:
        data = path.read_bytes()
    except OSError:
        return _unseen(f"{word.shown} was written this session and cannot be read")
    if b"\x00" in data[:8192]:  # a program compiled this session: its code cannot be read
        return _unseen(f"{word.shown} is a program built this session, whose code cannot be read")
    return path, data.decode("utf-8", "replace")


def _unseen(why: str) -> Ran:
    return Ran([destructive(f"runs code built at run time: {why}")])


def _make(arguments: tuple[Word, ...], place: Place) -> Ran | None:
    args = parse(arguments, MAKE_VALUES)
    directory = args.value("-C", "--directory")
    base = (directory[0].value or ".") if directory else "."
    files = args.value("-f", "--file", "--makefile")
    if any(word.value in ("-", "/dev/stdin", "/dev/fd/0") or word.value is None for word in files):
        return _unseen("make reads its Makefile from stdin or from a name only known at run time")
    candidates = [Word(f.text, f.value) for f in files] or [Word(n, f"{base}/{n}") for n in MAKEFILES]
    goals = [word.value for word in args.operands if word.value and "=" not in word.value]
    for candidate in candidates:
        found = _read(candidate, place, missing_runs=False)
        if isinstance(found, Ran):
            return found
        if found is not None:
            lines = makefile.recipes(found[1], goals)
            return Ran(shell=[Word(line, line) for line in lines if line])
    return None


def _package(name: str, arguments: tuple[Word, ...], place: Place) -> Ran | None:
    values = [word.value for word in arguments]
    if not values or values[0] is None:
        return None
    first, rest = values[0], values[1:]
    if first in ("run", "run-script", "rum", "urn"):
        scripts = [rest[0]] if rest and rest[0] else []
    elif first in LIFECYCLE:
        scripts = [LIFECYCLE[first]]
    elif first in ("install", "i", "ci") and not [v for v in rest if v and not v.startswith("-")]:
        scripts = INSTALL_SCRIPTS
    elif name != "npm" and first not in MANAGER_COMMANDS and not first.startswith("-"):
        scripts = [first]
    else:
        return None
    found = _read(Word("package.json", "package.json"), place, missing_runs=False)
    if found is None or isinstance(found, Ran):
        return found
    try:
        table = json.loads(found[1]).get("scripts") or {}
    except (ValueError, AttributeError):
        return None
    names = [f"{prefix}{script}" for script in scripts for prefix in ("pre", "", "post")]
    lines = [table[key] for key in names if isinstance(table.get(key), str)]
    return Ran(shell=[Word(line, line) for line in lines])
