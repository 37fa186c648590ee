"""What interpreter code visibly does: `python -c`, `perl -e`, `ruby -e`, `node -e`, `php -r`, and scripts the
agent wrote in this session (`python x.py`).

This is not a parser for five languages. It looks for the calls that delete, write, open sockets or run shell
commands, and for the string literals that name paths: a deletion or write whose literal target is outside the
workspace (or is home, `/`, the project itself) is destructive, a recursive deletion of a target it cannot see
is destructive, and the strings handed to a shell are returned to be checked as shell code. Code it cannot see
through (`exec(base64...)`) is left to the caller's floor: an interpreter is never read-only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mini_agent.safety.credential_places import place_of
from mini_agent.safety.shell import credentials
from mini_agent.safety.shell.paths import Place, broad, write_verdict
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary
from mini_agent.safety.shell.words import Word

LANGUAGES = {
    "python": re.compile(r"python[\d.]*|pypy[\d.]*"),
    "perl": re.compile(r"perl[\d.]*"),
    "ruby": re.compile(r"ruby[\d.]*"),
    "js": re.compile(r"node|nodejs|deno|bun"),
    "php": re.compile(r"php[\d.]*"),
}
CODE_OPTIONS = {
    "python": {"-c"},
    "perl": {"-e", "-E"},
    "ruby": {"-e"},
    "js": {"-e", "--eval", "-p", "--print"},
    "php": {"-r"},
}
DELETES = {
    "python": r"shutil\.rmtree|os\.(remove|unlink|rmdir|removedirs)\b|\.(unlink|rmdir)\(|send2trash",
    "perl": r"\b(unlink|rmtree|remove_tree|rmdir)\b",
    "ruby": r"FileUtils\.(rm\w*|remove\w*)|File\.(delete|unlink)|Dir\.(delete|rmdir|unlink)",
    "js": r"\b(rmSync|rmdirSync|unlinkSync|rimraf)\b|\.(rm|rmdir|unlink)\s*\(",
    "php": r"\b(unlink|rmdir)\s*\(",
}
RECURSIVE = r"rmtree|remove_tree|rm_r|rm_rf|remove_dir|remove_entry|recursive|rimraf|removedirs"
WRITES = {
    "python": r"open\s*\([^)]*['\"][wax]|\.write_(text|bytes)\(|shutil\.(copy\w*|move)"
    r"|os\.(rename|replace|symlink|link)",
    "perl": r"open\s*\(?[^;]*['\"]\s*\+?[>|]|\b(sysopen|rename|symlink|link)\b",
    "ruby": r"File\.(write|open\s*\([^)]*['\"][wa])|FileUtils\.(cp|mv|ln|touch|mkdir)\w*|IO\.write",
    "js": r"\b(writeFile|appendFile|createWriteStream|copyFile|rename|symlink|cp)(Sync)?\s*\(",
    "php": r"\b(file_put_contents|fopen\s*\([^)]*['\"][wax]|rename|copy|symlink)\b",
}
SHELL = {
    "python": r"os\.(system|popen|exec\w*|spawn\w*)|subprocess|pty\.spawn|commands\.getoutput",
    "perl": r"\b(system|exec|qx)\b|`",
    "ruby": r"\b(system|exec|spawn)\b|`|%x|Open3|IO\.popen",
    "js": r"child_process|\b(execSync|spawnSync|execFileSync|exec|spawn|execFile)\s*\(",
    "php": r"\b(shell_exec|system|passthru|exec|popen|proc_open)\s*\(|`",
}
SOCKETS = r"socket|fsockopen|TCPSocket|IO::Socket|net\.(connect|Socket|createConnection)"
HOME = (
    r"expanduser|Path\.home|os\.environ\[.HOME|getenv\(.HOME|\$ENV\{.?HOME|homedir\(\)|process\.env\.HOME"
    r"|Dir\.home|ENV\[.HOME"
)
STRINGS = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|`((?:[^`\\]|\\.)*)`", re.DOTALL)
LISTS = re.compile(r"\[([^\[\]]*)\]")
LIMIT = 200_000
SHELL_LIMIT = 200
"""Most string literals of code that calls a shell checked as shell commands (beyond, the rest is not seen)."""


@dataclass
class Findings:
    verdicts: list[Verdict] = field(default_factory=list)
    shell: list[Word] = field(default_factory=list)
    """Strings the code hands to a shell, to be checked as shell code."""


def language(name: str) -> str | None:
    return next((language for language, names in LANGUAGES.items() if names.fullmatch(name)), None)


def inline(name: str, arguments: tuple[Word, ...], place: Place) -> Findings | None:
    """The code given on the command line (`python -c CODE`), judged; None when there is none to see."""
    kind = language(name)
    if kind is None:
        return None
    for index, word in enumerate(arguments):
        value = word.value or ""
        if value in CODE_OPTIONS[kind] or (kind in ("perl", "ruby") and re.fullmatch(r"-[a-zA-Z]*[eE]", value)):
            if index + 1 >= len(arguments):
                return None
            code, rest = arguments[index + 1], arguments[index + 2 :]
        elif kind == "python" and re.fullmatch(r"-[a-zA-Z]*c.+", value, re.DOTALL):
            code, rest = Word(word.text, value[value.index("c") + 1 :]), arguments[index + 1 :]
        else:
            continue
        if code.value is None:
            return Findings([destructive(f"{name} runs code built at run time ({code.text})")])
        return judge(kind, code.value, place, rest)
    return None


def judge(kind: str, code: str, place: Place, extra: tuple[Word, ...] = ()) -> Findings:
    """What this code visibly does to files, sockets and shells."""
    code = code[:LIMIT]
    found = Findings()
    literals = [next(group for group in match.groups() if group is not None) for match in STRINGS.finditer(code)]
    paths = [Word(text, text) for text in literals if _path_like(text)] + [w for w in extra if w.value is not None]
    home = re.search(HOME, code) is not None
    found.verdicts += _credentials(kind, paths, home, place)
    if re.search(DELETES[kind], code):
        recursive = re.search(RECURSIVE, code) is not None
        if home:
            found.verdicts.append(destructive(f"{kind} code deletes under the home directory"))
        elif recursive and not paths:
            found.verdicts.append(destructive(f"{kind} code deletes a tree it names only at run time"))
        found.verdicts += _targets(kind, "deletes", paths, place, recursive)
        found.verdicts.append(ordinary(f"{kind} code deletes files"))
    if re.search(WRITES[kind], code):
        if home:
            found.verdicts.append(destructive(f"{kind} code writes under the home directory"))
        found.verdicts += _targets(kind, "writes", paths, place, False)
    shell = re.search(SHELL[kind], code) is not None
    if re.search(SOCKETS, code) and (shell or re.search(r"dup2|pty|/bin/(ba)?sh|cmd\.exe", code)):
        found.verdicts.append(destructive(f"{kind} code connects a socket to a shell (a reverse or bind shell)"))
    if shell:
        found.shell += [Word(t, t.encode().decode("unicode_escape", "replace")) for t in literals[:SHELL_LIMIT] if t]
        for match in LISTS.finditer(code):  # subprocess.run(['rm', '-rf', '/'])
            items = [next(g for g in m.groups() if g is not None) for m in STRINGS.finditer(match[1])]
            if len(items) > 1:
                joined = " ".join(_quote(item) for item in items)
                found.shell.append(Word(joined, joined))
        found.verdicts.append(ordinary(f"{kind} code runs shell commands"))
    return found


def _credentials(kind: str, paths: list[Word], home: bool, place: Place) -> list[Verdict]:
    """Code naming a credential file outside the project reads it, whatever it then does with it."""
    for word in paths[:50]:
        verdict = credentials.outside(word, place)
        if verdict is not None:
            return [destructive(f"{kind} code {verdict.reason}")]
        name = (word.value or "").strip("/").split("/")[0]
        if home and (name in credentials.HOME_SECRET_NAMES or place_of(word.value or "")):
            return [destructive(f"{kind} code reads credentials outside the project (~/{word.value})")]
    return []


def _targets(kind: str, verb: str, paths: list[Word], place: Place, recursive: bool) -> list[Verdict]:
    found: list[Verdict] = []
    for word in paths[:50]:
        if verb == "deletes" and recursive and broad(word, place):
            found.append(destructive(f"{kind} code deletes a broad target ({word.shown})"))
            continue
        verdict = write_verdict(word, place, verb)
        if verdict is not None and verdict.kind == "destructive":
            found.append(destructive(f"{kind} code {verdict.reason}"))
    return found


def _path_like(text: str) -> bool:
    """Whether a string literal could be a file name (any short one-line string could)."""
    return bool(text) and len(text) < 4096 and "\n" not in text and "\x00" not in text


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
