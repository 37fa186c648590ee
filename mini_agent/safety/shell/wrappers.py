"""Commands that run another command: `timeout 5 npm test` is checked as `npm test`, plus what the wrapper adds
(`sudo` runs it as another user, `env LD_PRELOAD=...` changes what it loads, `xargs` feeds it operands)."""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

from mini_agent.safety.shell.commands import Assignment
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary
from mini_agent.safety.shell.words import Word, literal

LAYERS_LIMIT = 16
"""Most wrappers unwrapped around one command (`nice nice nice ...` is not worth more)."""
# (options that take a value, options that end unwrapping because no command follows)
OPTIONS: dict[str, tuple[set[str], set[str]]] = {
    "nohup": (set(), set()),
    "builtin": (set(), set()),
    "time": ({"-f", "--format", "-o", "--output"}, set()),
    "command": (set(), {"-v", "-V"}),
    "exec": ({"-a"}, set()),
    "nice": ({"-n", "--adjustment"}, set()),
    "ionice": ({"-c", "--class", "-n", "--classdata"}, {"-p", "--pid", "-P", "--pgid", "-u", "--uid"}),
    "timeout": ({"-k", "--kill-after", "-s", "--signal"}, set()),
    "stdbuf": ({"-i", "--input", "-o", "--output", "-e", "--error"}, set()),
    "setsid": (set(), set()),
    "env": ({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, set()),
    "sudo": ({"-u", "--user", "-g", "--group", "-h", "--host", "-p", "--prompt", "-C", "--close-from", "-D",
              "--chdir", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T", "--command-timeout"},
             {"-e", "--edit", "-l", "--list", "-v", "--validate", "-k", "-K"}),
    "doas": ({"-u", "-C"}, set()),
    "pkexec": ({"--user"}, set()),
    "runuser": ({"-u", "--user", "-g", "--group", "-G", "--supp-group"}, {"-c", "--command", "-l", "--login"}),
    "xargs": ({"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "--max-args", "-P",
               "--max-procs", "-s", "--max-chars", "--process-slot-var"}, set()),
    "watch": ({"-n", "--interval", "-q", "--equexit"}, set()),
    "busybox": (set(), set()),
    "toybox": (set(), set()),
    "flock": ({"-w", "--timeout", "--wait", "-E", "--conflict-exit-code"}, set()),
    "parallel": ({"-j", "--jobs", "-S", "--sshlogin", "--results", "-a", "--arg-file", "--joblog", "--delay",
                  "--timeout", "-N", "-n", "-L", "--colsep", "-d", "--delimiter", "-I", "--tmpdir"}, set()),
}  # fmt: skip
# GNU parallel's replacement strings: each stands for an input line, unknown before running.
PARALLEL_PLACEHOLDER = re.compile(r"\{[^{}\s]*\}")
AS_ANOTHER_USER = {"sudo", "doas", "pkexec", "runuser"}
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Unwrapped:
    command: tuple[Word, ...]
    """The innermost command, which the rules judge."""
    layers: tuple[tuple[Word, ...], ...]
    """Each command inside a wrapper, outermost first: forms for permission rules."""
    verdicts: tuple[Verdict, ...]
    """What the wrappers themselves add."""
    assignments: tuple[Assignment, ...]
    """`env NAME=value` settings, judged like `NAME=value cmd`."""
    stdin_operands: bool
    """xargs appends operands read from stdin: the command's targets are unknown."""


def command_name(word: Word) -> str | None:
    """The name the rules know a command by: `/usr/bin/rm`, `./rm` and `Rm` are rm (case-insensitive file
    systems run `Rm` as rm, so names are compared in lower case)."""
    return os.path.basename(word.value).lower() if word.value is not None else None


def unwrap(words: tuple[Word, ...]) -> Unwrapped:
    """Peel the wrappers off a command, outermost first."""
    layers: list[tuple[Word, ...]] = []
    verdicts: list[Verdict] = []
    assignments: list[Assignment] = []
    stdin_operands = False
    command = words
    for _ in range(LAYERS_LIMIT):
        name = command_name(command[0]) if command else None
        if name not in OPTIONS:
            break
        inner, flags, values = _strip_options(name, command[1:])
        if inner is None:
            break
        if name in AS_ANOTHER_USER:
            verdicts.append(destructive(f"runs as another user ({name})"))
        if name == "time" and values.get("-o", values.get("--output")):
            verdicts.append(ordinary("time -o writes its report to a file"))
        if name == "env":
            inner, settings = _env(inner, values.get("-S", values.get("--split-string")))
            assignments += settings
            if not inner:
                break
        if name == "xargs":
            stdin_operands = True
            inner = _xargs(inner, values.get("-I"), "-i" in flags)
        if name == "watch" and "-x" not in flags and "--exec" not in flags:
            inner = _as_script(inner, _joined(inner))
        if name == "flock":  # `flock LOCKFILE cmd ...` or `flock LOCKFILE -c 'code'`
            inner = inner[1:]
            if inner and inner[0].value in ("-c", "--command"):
                inner = (literal("sh"), *inner)
        if name == "parallel":
            inner = _parallel(inner)
        layers.append(inner)
        command = inner
    return Unwrapped(command, tuple(layers), tuple(verdicts), tuple(assignments), stdin_operands)


def _strip_options(name: str, rest: tuple[Word, ...]) -> tuple[tuple[Word, ...] | None, set[str], dict[str, Word]]:
    """The command after the wrapper's options (None when no command follows), the flags, the values."""
    takes_value, no_command = OPTIONS[name]
    flags: set[str] = set()
    values: dict[str, Word] = {}
    index = 0
    while index < len(rest):
        text = rest[index].value
        if text is None or not text.startswith("-") or text == "-":
            break
        index += 1
        if text == "--":
            break
        if text.startswith("--"):
            flag, equals, attached = text.partition("=")
            flags.add(flag)
            if flag in takes_value and equals:
                values[flag] = Word(text, attached)
            elif flag in takes_value and index < len(rest):
                values[flag], index = rest[index], index + 1
            continue
        if name == "nice" and text[1:].isdigit():  # `nice -10 cmd`
            continue
        for position in range(1, len(text)):  # a cluster like `-iu NAME` or `-n10`
            flag = "-" + text[position]
            flags.add(flag)
            if flag in takes_value:
                if text[position + 1 :]:
                    values[flag] = Word(text, text[position + 1 :])
                elif index < len(rest):
                    values[flag], index = rest[index], index + 1
                break
    if flags & no_command:
        return None, flags, values
    command = rest[index:]
    if name == "timeout":
        command = command[1:]  # the duration
    if not command and name not in ("xargs", "env"):
        return None, flags, values
    return command, flags, values


def _env(rest: tuple[Word, ...], split: Word | None) -> tuple[tuple[Word, ...], list[Assignment]]:
    settings: list[Assignment] = []
    index = 0
    while index < len(rest) and rest[index].value is not None and "=" in (rest[index].value or ""):
        key, _, value = (rest[index].value or "").partition("=")
        if not NAME.fullmatch(key):
            break
        settings.append(Assignment(key, Word(rest[index].text, value)))
        index += 1
    command = rest[index:]
    if split is not None:
        command = (*_split(split), *command)
    return command, settings


def _split(word: Word) -> tuple[Word, ...]:
    """`env -S "cmd args"`: the string split into words (quotes understood), or one unknown word."""
    if word.value is None:
        return (Word(word.text, None),)
    try:
        return tuple(Word(part, part) for part in shlex.split(word.value))
    except ValueError:
        return (Word(word.text, None),)


def _xargs(inner: tuple[Word, ...], replace: Word | None, legacy_replace: bool) -> tuple[Word, ...]:
    command = inner or (literal("echo"),)
    marker = "{}" if legacy_replace else (replace.value if replace is not None else None)
    if not marker:
        return command
    return tuple(Word(w.text, None) if w.value is not None and marker in w.value else w for w in command)


def _as_script(words: tuple[Word, ...], code: str | None) -> tuple[Word, ...]:
    """The words a wrapper hands to `sh -c` as one string (watch, parallel)."""
    return (literal("sh"), literal("-c"), Word(" ".join(w.text for w in words), code))


def _parallel(inner: tuple[Word, ...]) -> tuple[Word, ...]:
    ends = [index for index, word in enumerate(inner) if word.value in (":::", "::::", ":::+", "::::+")]
    command = inner[: ends[0]] if ends else inner
    code = _joined(command)
    if code is not None:
        code = PARALLEL_PLACEHOLDER.sub('"$ARG"', code) if PARALLEL_PLACEHOLDER.search(code) else code + ' "$ARG"'
    return _as_script(command, code)


def _joined(words: tuple[Word, ...]) -> str | None:
    values = [word.value for word in words]
    return None if any(value is None for value in values) else " ".join(v or "" for v in values)
