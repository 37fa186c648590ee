"""Shell code inside other commands' arguments: sed's `e`, trap and alias bodies, ssh's remote command, and
one-liners for interpreters (`python -c`, `perl -e`, awk programs).

Interpreter code is not shell, so here it is only searched for the destructive shapes of the safety net
(`os.system("rm -rf ~")`); interpreters.py looks at what the code does to files, sockets and shells.
"""

from __future__ import annotations

import re

from mini_agent.safety.shell import argv, sed
from mini_agent.safety.shell.fallback import destructive_shape
from mini_agent.safety.shell.scripts import INTERPRETER, Code
from mini_agent.safety.shell.verdict import destructive, ordinary
from mini_agent.safety.shell.words import Word

AWK = re.compile(r"[gmn]?awk")
SSH_VALUES = set("-b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w -B".split())
SED_VALUES = {"-e", "--expression", "-f", "--file", "-l"}


def code(name: str, arguments: tuple[Word, ...]) -> Code | None:
    """Shell code (and verdicts) carried by this command's arguments, or None."""
    if AWK.fullmatch(name) and _awk_program(arguments) is None:
        return Code((destructive(f"{name} runs a program built at run time"),))
    if INTERPRETER.fullmatch(name) or AWK.fullmatch(name):
        for word in arguments:
            shape = destructive_shape(word.value) if word.value else None
            if shape:
                return Code((destructive(f"{name} code that looks destructive: {shape}"),))
        return None
    if name == "sed":
        return _sed(arguments)
    if name == "trap" and len(arguments) > 1 and not (arguments[0].value or "-").startswith("-"):
        return Code((), (arguments[0],))
    if name == "alias":
        settings = [w for w in arguments if w.value is None or "=" in w.value]
        return Code((), tuple(Word(w.text, w.value.partition("=")[2] if w.value else None) for w in settings))
    if name == "ssh":
        return _ssh(arguments)
    if name == "script":
        return Code(
            (), tuple(argv.parse(arguments, {"-c", "--command", "-E", "-T", "-I", "-O", "-B"}).value("-c", "--command"))
        )
    return None


def _awk_program(arguments: tuple[Word, ...]) -> Word | None:
    """awk's program text: the first operand unless -f names a file (then a placeholder that is known)."""
    args = argv.parse(arguments, {"-f", "--file", "-v", "--assign", "-F", "--field-separator", "-e", "--source"})
    if args.value("-f", "--file"):
        return Word("-f", "-f")
    programs = args.value("-e", "--source") or list(args.operands[:1])
    return programs[0] if programs and programs[0].value is not None else (None if programs else Word("", ""))


def _sed(arguments: tuple[Word, ...]) -> Code | None:
    args = argv.parse(arguments, SED_VALUES)
    scripts = args.value("-e", "--expression") or list(args.operands[:1])
    if any(word.value is None for word in scripts):
        return Code((destructive("sed runs a script built at run time (it may use e or w)"),))
    effects = [sed.effects(word.value) for word in scripts if word.value is not None]
    if any(effect.runs_text for effect in effects):
        return Code((destructive("sed runs the edited text as shell commands (e)"),))
    commands = tuple(Word(command, command) for effect in effects for command in effect.commands)
    return Code((), commands) if commands else None


def _ssh(arguments: tuple[Word, ...]) -> Code:
    args = argv.parse(arguments, SSH_VALUES, permute=False)
    remote = args.operands[1:]
    if not remote:
        return Code((ordinary("opens a shell on another machine (ssh)"),))
    if any(word.value is None for word in remote):
        return Code((destructive("ssh runs a command built at run time on another machine"),))
    command = " ".join(word.value or "" for word in remote)
    return Code((ordinary("runs commands on another machine (ssh)"),), (Word(command, command),))
