"""What a sed script does besides printing: `w`/`W` write files, `e` runs shell commands, `s///w` and
`s///e` write or execute; anything the scanner does not know counts as both."""

from __future__ import annotations

from dataclasses import dataclass, field

_NO_ARGUMENT = set("=dDgGhHlnNpPqQxzF")
_TO_END_OF_LINE = set("aic#bTt:rRvL")


@dataclass
class Effects:
    writes: list[str] = field(default_factory=list)
    """Files named by `w`, `W` and `s///w`."""
    unknown: bool = False
    commands: list[str] = field(default_factory=list)
    """Shell commands given to `e` in the script."""
    runs_text: bool = False
    """`e` without a command or `s///e`: the edited text itself is run as a command."""

    @property
    def only_prints(self) -> bool:
        return not (self.writes or self.unknown or self.commands or self.runs_text)


def effects(script: str) -> Effects:
    found = Effects()
    index = 0
    while index < len(script):
        if script[index] in " \t\n;{}!":
            index += 1
            continue
        index = _skip_address(script, index)
        if index >= len(script):
            break
        command = script[index]
        index += 1
        end = script.find("\n", index)
        end = len(script) if end < 0 else end
        if command in _NO_ARGUMENT:
            continue
        if command in _TO_END_OF_LINE or command in "wWe":
            argument = script[index:end].strip()
            if command == "e" and argument:
                found.commands.append(argument)
            found.runs_text = found.runs_text or (command == "e" and not argument)
            if command in "wW":
                found.writes.append(argument)
            index = end
        elif command in "sy" and index < len(script):
            index = _skip_delimited(script, index, parts=2)
            if command == "s":
                flags_end = index
                while flags_end < len(script) and script[flags_end] not in ";\n}":
                    flags_end += 1
                flags, w, written = script[index:flags_end].partition("w")
                if w:  # `s/a/b/w file`: the file name runs to the end of the line
                    flags_end = script.find("\n", index)
                    flags_end = len(script) if flags_end < 0 else flags_end
                    found.writes.append(script[index:flags_end].partition("w")[2].strip())
                found.runs_text = found.runs_text or "e" in flags
                index = flags_end
        else:
            found.unknown = True
            break
    return found


def _skip_address(script: str, index: int) -> int:
    while index < len(script):
        char = script[index]
        if char.isdigit() or char in "$,~+ \t!":
            index += 1
        elif char == "/":
            index = _skip_delimited(script, index, parts=1)
            while index < len(script) and script[index] in "IM":
                index += 1
        elif char == "\\" and index + 1 < len(script):
            index = _skip_delimited(script, index + 1, parts=1)
        else:
            return index
    return index


def _skip_delimited(script: str, index: int, parts: int) -> int:
    """Skip `<d>part<d>part...<d>` starting at the delimiter; backslash escapes the next character."""
    delimiter = script[index]
    index += 1
    for _ in range(parts):
        while index < len(script) and script[index] != delimiter:
            index += 2 if script[index] == "\\" else 1
        index += 1
    return index
