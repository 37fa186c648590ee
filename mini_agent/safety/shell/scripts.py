"""Commands that run shell code: shells, eval, source, su -c, at, and interpreters fed through a pipe.

Code given as a string (`bash -c '...'`, `eval ...`, a heredoc fed to `sh`) is returned to be checked as a
script of its own. Code that only exists at run time (`bash -c "$CMD"`, `curl ... | sh`, `bash <(curl ...)`)
cannot be checked, which makes the command destructive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mini_agent.safety.shell import argv
from mini_agent.safety.shell.commands import Command
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary, read_only
from mini_agent.safety.shell.words import Word
from mini_agent.safety.shell.wrappers import command_name, unwrap

SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "yash", "posh"}
SHELL_VALUES = {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}
INTERPRETER = re.compile(r"(python[\d.]*|pypy[\d.]*|perl|ruby|node|nodejs|php|lua[\d.]*|rscript|deno|bun|tclsh)")
INLINE_CODE = {"-c", "-e", "-E", "-m", "-r", "-p", "--eval", "--print", "--command"}
DOWNLOADERS = {"curl", "wget", "fetch", "nc", "ncat", "netcat", "socat", "aria2c", "http", "https", "lynx", "ftp"}
DECODERS = {"uudecode", "gunzip", "zcat", "bunzip2", "bzcat", "unxz", "xzcat", "unzstd", "zstdcat", "openssl"}
DECODE_FLAGS = {"-d", "--decode", "-D", "-r", "--revert"}
STDIN_PATHS = {"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}
SU_VALUES = {"-c", "--command", "--session-command", "-s", "--shell", "-g", "--group", "-G", "-w"}
INSIDE = read_only("runs the commands inside it, which are checked on their own")


@dataclass(frozen=True)
class Code:
    verdicts: tuple[Verdict, ...]
    """The verdict on the command itself; empty when the ordinary rules should judge it."""
    scripts: tuple[Word, ...] = ()
    """Shell code this command runs, to be checked as scripts of their own."""


def runs(name: str, arguments: tuple[Word, ...], command: Command) -> Code | None:
    """What running this command's code means, or None if it is not a command that runs shell code."""
    if name in SHELLS:
        return _shell(name, arguments, command)
    if name == "eval":
        if any(word.value is None for word in arguments):
            return Code((destructive("eval runs code built at run time"),))
        return Code((INSIDE,), (Word(" ".join(w.text for w in arguments), " ".join(w.shown for w in arguments)),))
    if name in ("source", "."):
        if not arguments:
            return Code((ordinary(f"{name} without a file"),))
        return _script_file(name, arguments[0], command, "sources")
    if name in ("at", "batch"):  # the commands to schedule come from -f FILE or stdin
        script = argv.parse(arguments, {"-f", "-q", "-t"}).value("-f")
        return _script_file(name, script[0], command, "schedules") if script else _stdin(name, command)
    if name in ("su", "runuser"):
        args = argv.parse(arguments, SU_VALUES)
        return Code((destructive(f"runs as another user ({name})"),), tuple(args.value("-c", "--command")))
    if INTERPRETER.fullmatch(name):
        return _interpreter(name, arguments, command)
    return None


def _shell(name: str, arguments: tuple[Word, ...], command: Command) -> Code:
    flags: set[str] = set()
    index = 0
    while index < len(arguments):
        text = arguments[index].value
        if text is None or text in ("-", "--") or not text.startswith(("-", "+")):
            index += 1 if text in ("-", "--") else 0
            break
        index += 1
        if text in SHELL_VALUES:
            index += 1
        elif text.startswith("--"):
            flags.add(text)
        else:
            flags.update("-" + char for char in text[1:])
    operands = arguments[index:]
    if "-c" in flags:
        if not operands:
            return Code((ordinary(f"{name} -c without a command"),))
        if operands[0].value is None:
            return Code((destructive(f"{name} -c runs code built at run time"),))
        return Code((INSIDE,), (operands[0],))
    if operands and "-s" not in flags:
        return _script_file(name, operands[0], command, "runs")
    return _stdin(name, command)


def _stdin(name: str, command: Command) -> Code:
    """A shell reading its script from stdin: a pipe, a heredoc, a file, or the terminal."""
    if command.piped:
        return Code((destructive(f"runs text piped into a shell ({name})"),))
    for redirect in command.redirects:
        if redirect.operator in ("<<", "<<-", "<<<"):
            if redirect.body is None:
                return Code((destructive(f"{name} runs a heredoc built at run time"),))
            return Code((INSIDE,), (Word(redirect.body, redirect.body),))
        if redirect.operator == "<" and redirect.target is not None:
            return _script_file(name, redirect.target, command, "runs")
    return Code((ordinary(f"starts an interactive shell ({name})"),))


def _script_file(name: str, script: Word, command: Command, verb: str) -> Code:
    if script.produced:
        return Code((destructive(f"{verb} a script produced at run time ({script.text})"),))
    if script.value in STDIN_PATHS:
        return _stdin(name, command)
    return Code((ordinary(f"{verb} the script {script.shown}"),))


def _interpreter(name: str, arguments: tuple[Word, ...], command: Command) -> Code | None:
    """`python <(curl ...)` and `curl ... | python` run code nobody has seen."""
    args = argv.parse(arguments)
    if args.has(*INLINE_CODE):
        return None
    script = args.operands[0] if args.operands else None
    if script is not None and script.produced:
        return Code((destructive(f"{name} runs a script produced at run time ({script.text})"),))
    reads_stdin = script is None or script.value in STDIN_PATHS
    if reads_stdin and command.piped and any(_downloads_or_decodes(stage) for stage in command.upstream):
        return Code((destructive(f"runs downloaded or decoded code with {name}"),))
    return None


def _downloads_or_decodes(stage: Command) -> bool:
    inner = unwrap(stage.words).command
    name = command_name(inner[0]) if inner else None
    if name in DOWNLOADERS or name in DECODERS:
        return True
    if name in ("base64", "base32", "basenc", "xxd", "gzip", "bzip2", "xz", "zstd"):
        return any(flag in DECODE_FLAGS for flag in argv.parse(inner[1:]).flags)
    return False
