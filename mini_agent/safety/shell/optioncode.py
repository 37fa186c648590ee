"""Shell code hidden in other tools' options: `tar --checkpoint-action=exec=CMD`, `zip -TT CMD`, `rsync -e CMD`,
`ssh -o ProxyCommand=CMD`, `vim -c '!CMD'`, `less +!CMD`, `man -P CMD`, `gdb -ex 'shell CMD'`,
`sqlite3 db '.shell CMD'`, `psql -c '\\! CMD'`.

Each such value is returned to be checked as a shell script of its own; a value only known at run time is
returned as an unknown word, which the classifier treats as code built at run time.
"""

from __future__ import annotations

import re

from mini_agent.safety.shell.words import Word

# Per tool: options whose value is a shell command line.
COMMAND_OPTIONS = {
    "tar": {"--to-command", "--use-compress-program", "-I", "--info-script", "-F", "--new-volume-script"},
    "zip": {"-TT", "--unzip-command"},
    "rsync": {"-e", "--rsh"},
    "man": {"-P", "--pager", "-H", "--html"},
    "gdb": set(),
    "psql": set(),
}
SSH_LIKE = {"ssh", "scp", "sftp", "autossh"}
SSH_COMMAND_KEYS = re.compile(r"\s*(proxycommand|localcommand|knownhostscommand|remotecommand)\s*[= ]\s*(.*)", re.I)
EDITORS = {"vim", "vi", "nvim", "view", "ex", "vimdiff", "gvim", "less", "more"}
EDITOR_SHELL = re.compile(r"\s*:?\s*(silent!?\s*)?!(.*)", re.DOTALL)
GDB_SHELL = re.compile(r"\s*(shell\s+|!)(.*)", re.DOTALL)
SQLITE_SHELL = re.compile(r"\s*\.(shell|system)\s+(.*)", re.DOTALL)
PSQL_SHELL = re.compile(r".*\\!\s*(.*)", re.DOTALL)


def scripts(name: str, arguments: tuple[Word, ...]) -> list[Word]:
    """Shell code this command's options carry."""
    if name in COMMAND_OPTIONS:
        found = [value for option, value in _options(arguments) if option in COMMAND_OPTIONS[name]]
        if name == "tar":
            actions = [value for option, value in _options(arguments) if option == "--checkpoint-action"]
            found += [_after(action, "exec=") for action in actions if action.value is None or "exec=" in action.value]
        if name == "gdb":
            found += _matching(arguments, GDB_SHELL, ("-ex", "--eval-command", "-iex"))
        if name == "psql":
            found += _matching(arguments, PSQL_SHELL, ("-c", "--command"), group=1)
        return found
    if name in SSH_LIKE:
        settings = [value for option, value in _options(arguments) if option == "-o"]
        return [_command_setting(word) for word in settings if word.value is None or SSH_COMMAND_KEYS.match(word.value)]
    if name in EDITORS:
        values = [value for option, value in _options(arguments) if option in ("-c", "--cmd")]
        values += [Word(w.text, w.value[1:]) for w in arguments if w.value is not None and w.value.startswith("+")]
        found = [w for w in values if w.value is None]
        found += [Word(w.text, m[2]) for w in values if w.value is not None and (m := EDITOR_SHELL.match(w.value))]
        return found
    if name in ("sqlite3", "sqlite"):
        return [Word(w.text, m[2]) for w in arguments if w.value is not None and (m := SQLITE_SHELL.match(w.value))]
    return []


def _options(arguments: tuple[Word, ...]) -> list[tuple[str, Word]]:
    """(option, value) pairs, for `--opt=value`, `--opt value`, `-o value` and `-ovalue` alike."""
    pairs: list[tuple[str, Word]] = []
    for index, word in enumerate(arguments):
        value = word.value
        following = arguments[index + 1] if index + 1 < len(arguments) else Word("", "")
        if value is None or not value.startswith("-"):
            continue
        if value.startswith("--"):
            option, equals, attached = value.partition("=")
            pairs.append((option, Word(word.text, attached) if equals else following))
        else:
            pairs.append((value, following))
            pairs.append((value[:2], Word(word.text, value[2:])) if len(value) > 2 else (value, following))
            if value.startswith("-TT") or value.startswith("-ex"):
                pairs.append((value[:3], Word(word.text, value[3:]) if len(value) > 3 else following))
    return pairs


def _after(word: Word, prefix: str) -> Word:
    return Word(word.text, None) if word.value is None else Word(word.text, word.value.partition(prefix)[2])


def _command_setting(word: Word) -> Word:
    match = SSH_COMMAND_KEYS.match(word.value or "")
    return Word(word.text, match[2] if match else None)


def _matching(arguments: tuple[Word, ...], pattern: re.Pattern[str], options: tuple[str, ...], group: int = 2):
    values = [value for option, value in _options(arguments) if option in options]
    return [w for w in values if w.value is None] + [
        Word(w.text, m[group]) for w in values if w.value is not None and (m := pattern.match(w.value))
    ]
