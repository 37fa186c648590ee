"""Reading a command's arguments the way getopt does: flags, option values and operands."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mini_agent.safety.shell.words import Word


@dataclass(frozen=True)
class Args:
    flags: tuple[str, ...]
    """Every option given, short ones split out of clusters (`-rf` is `-r`, `-f`), long ones without `=value`."""
    values: tuple[tuple[str, Word], ...]
    """(option, value) for options that took one, attached (`-n5`, `--output=x`) or as the next word."""
    operands: tuple[Word, ...]
    dynamic: tuple[Word, ...]
    """Words before `--` whose value is computed at run time: each might turn out to be an option."""

    def has(self, *names: str) -> bool:
        """Whether any of these options was given; long options also match a unique-prefix abbreviation
        (`--outp` for `--output`, which getopt accepts), counted conservatively."""
        return any(_matches(flag, name) for flag in self.flags for name in names)

    def value(self, *names: str) -> list[Word]:
        return [word for flag, word in self.values if any(_matches(flag, name) for name in names)]


def _matches(flag: str, name: str) -> bool:
    if flag == name:
        return True
    return name.startswith("--") and flag.startswith("--") and len(flag) > 3 and name.startswith(flag)


def parse(words: Sequence[Word], takes_value: Iterable[str] = (), permute: bool = True) -> Args:
    """Split arguments into options and operands. With `permute` (GNU style) options may follow operands;
    otherwise the first operand ends the options."""
    needs_value = frozenset(takes_value)
    flags: list[str] = []
    values: list[tuple[str, Word]] = []
    operands: list[Word] = []
    dynamic: list[Word] = []
    index, options_over = 0, False
    while index < len(words):
        word = words[index]
        index += 1
        text = word.value
        if options_over or text is None or text == "-" or not text.startswith("-"):
            if text is None and not options_over:
                dynamic.append(word)
            operands.append(word)
            options_over = options_over or not permute
            continue
        if text == "--":
            options_over = True
            continue
        if text.startswith("--"):
            name, equals, attached = text.partition("=")
            flags.append(name)
            if equals:
                values.append((name, Word(word.text, attached)))
            elif name in needs_value and index < len(words):
                values.append((name, words[index]))
                index += 1
            continue
        for position in range(1, len(text)):
            name = "-" + text[position]
            flags.append(name)
            if name in needs_value:
                rest = text[position + 1 :]
                if rest:
                    values.append((name, Word(word.text, rest)))
                elif index < len(words):
                    values.append((name, words[index]))
                    index += 1
                break
    return Args(tuple(flags), tuple(values), tuple(operands), tuple(dynamic))
