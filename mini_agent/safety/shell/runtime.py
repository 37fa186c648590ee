"""Words whose meaning only the running shell knows: they never leave a command read-only.

An expansion in a command's name or in an option (`find . -${t}exec rm {} +`) can turn into any name or
option, so the command is judged as if it were its worst option. Values that bash evaluates as code (`${!x}`,
`${x@P}`, arithmetic, subscripts in names given to builtins) run whatever text a variable holds. A name in
mixed case (`SuDo`, which runs sudo on a case-insensitive file system) is judged as its lower-case self, and
characters that look like spaces but do not split words make a command that reads differently than it runs.
"""

from __future__ import annotations

import os
import re

from mini_agent.safety.shell import evaluation
from mini_agent.safety.shell.commands import Command
from mini_agent.safety.shell.fallback import destructive_shape
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary
from mini_agent.safety.shell.words import Word

# What an option built at run time may turn out to be, for commands with options that delete or run code.
WORST_OPTIONS = {
    "find": "-exec or -delete",
    "xargs": "an option that changes which command runs",
    "git": "-c core.pager=... (runs shell code)",
    "sed": "-i or a script running e",
    "awk": "a program calling system()",
    "gawk": "a program calling system()",
    "mawk": "a program calling system()",
    "nawk": "a program calling system()",
    "tar": "--to-command or --checkpoint-action=exec",
    "env": "-S (runs a string as a command)",
    "rsync": "-e (runs a remote shell command) or --delete",
    "ssh": "-o ProxyCommand=... (runs a command)",
    "scp": "-o ProxyCommand=... (runs a command)",
    "rg": "--pre (runs a program)",
    "sort": "--compress-program (runs a program)",
    "zip": "-TT (runs a command)",
    "vim": "-c '!...' (runs a command)",
    "nvim": "-c '!...' (runs a command)",
    "less": "a command prefixed by !",
    "man": "-P (runs a pager command)",
    "bash": "-c (runs code)",
    "sh": "-c (runs code)",
    "python": "-c (runs code)",
    "python3": "-c (runs code)",
    "perl": "-e (runs code)",
    "node": "-e (runs code)",
    "ruby": "-e (runs code)",
}
# Characters bash does not split words on, though they look like a space, a line break or nothing at all.
LOOKALIKES = re.compile("[\u00a0\u1680\u2000-\u200d\u2028\u2029\u202f\u205f\u2060\u3000\ufeff\u0085\u180e\r\x0b\x0c]")


def verdicts(inner: tuple[Word, ...], name: str) -> list[Verdict]:
    """What expansions in the name and options of a command, a mixed-case name or look-alike spaces add."""
    found: list[Verdict] = []
    first = inner[0]
    if first.expanded:
        found.append(ordinary(f"the command's name is built with an expansion ({first.text})"))
    written = os.path.basename(first.value or "")
    if written != name:
        found.append(ordinary(f"{written} is {name} written in another case, which some file systems run as {name}"))
    options = [word for word in inner[1:] if word.expanded and _option_like(word)]
    if options and name in WORST_OPTIONS:
        found.append(
            destructive(
                f"an option of {name} is built at run time ({options[0].text}), so it counts as the worst one: "
                f"{WORST_OPTIONS[name]}"
            )
        )
    elif options:
        found.append(ordinary(f"an option of {name} is built at run time ({options[0].text})"))
    elif name in WORST_OPTIONS and any(word.value is None and not word.stream for word in inner[1:]):
        found.append(ordinary(f"an argument of {name} is computed at run time and may turn out to be an option"))
    found += lookalikes(inner)
    return found


def _option_like(word: Word) -> bool:
    """Whether the word is an option whose rest is built at run time: its fixed start is a dash."""
    if word.value is not None:
        return word.value.startswith("-")
    return word.text.lstrip("'\"").startswith("-")


def lookalikes(words: tuple[Word, ...]) -> list[Verdict]:
    text = " ".join(word.text for word in words)
    if not LOOKALIKES.search(text):
        return []
    shape = destructive_shape(LOOKALIKES.sub(" ", text))
    if shape:
        return [destructive(f"has characters that look like spaces but are not, and then looks destructive: {shape}")]
    return [ordinary("has characters that look like spaces (or nothing) but do not split words")]


SUBSTITUTION_TEXT = re.compile(r"\$\(|`")


def carries_code(command: Command) -> bool:
    """Whether the command hands text holding `$(...)` or backticks to something that may store it in a
    variable (`read x <<< '$(id)'`, `printf -v x '$(id)'`): a later evaluation would run it."""
    bodies = [redirect.body for redirect in command.redirects if redirect.body]
    words = [word.value for word in command.words[1:] if word.value and not word.expanded]
    return any(SUBSTITUTION_TEXT.search(text) for text in [*bodies, *words])


def evaluation_verdicts(
    command: Command, name: str | None, arguments: tuple[Word, ...], code_seen: bool = False
) -> list[Verdict]:
    """Values evaluated as code: never read-only; destructive when the code evaluated is visible (in the
    evaluated text, or in a variable of this command line: `code_seen`)."""
    found: list[Verdict] = []
    reason = command.evaluates
    if name is not None:
        taken = evaluation.subscript_code(name, [(word.text, word.value) for word in arguments])
        if taken is not None and taken[1]:
            found.append(destructive(f"runs code built at run time: {taken[0]}"))
        elif taken is not None:
            reason = reason or taken[0]
    if reason and (command.code_in_variables or code_seen or evaluation.VISIBLE in reason):
        found.append(destructive(f"runs code built at run time: {reason}, and a variable here holds code"))
    elif reason:
        found.append(ordinary(f"{reason}, which can run code"))
    return found
