"""What a shell word means before the command runs: quoting removed, known variables filled in, braces expanded.

A word is static when its value can be known from the text alone. Anything the shell computes while running
(`$VAR` from the environment, `$(...)`, arithmetic) leaves the word dynamic: its value is None and the rules
treat it as unknown, which is never in the command's favour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from mini_agent.safety.shell import evaluation

Node = Any
"""A tree_sitter.Node; typed loosely so that importing this module never imports tree-sitter."""

BRACE_LIMIT = 64
"""Most words one brace expansion may produce; beyond it the word is left unexpanded."""
GLOB = re.compile(r"[*?]|\[.*\]")
SUBSTITUTIONS = ("command_substitution", "process_substitution")


@dataclass(frozen=True)
class Word:
    """One word of a command as the shell will see it."""

    text: str
    """The source text, quotes included."""
    value: str | None
    """The word after quote removal and expansion, or None when only the running shell can know it."""
    glob: bool = False
    """Has unquoted `*`, `?` or `[...]`: the shell replaces it with matching file names."""
    produced: bool = False
    """Comes from a command's output: `$(...)`, backticks or a process substitution `<(...)`."""
    stream: bool = False
    """A process substitution: the path of a pipe to or from a command that is checked on its own."""
    expanded: bool = False
    """Holds an expansion (`$x`, `${...}`, `$(...)`, backticks, `$9`, arithmetic), even one resolved statically."""
    evaluates: str | None = None
    """How the word makes bash evaluate a variable's value as code (`${!x}`, `${x@P}`, arithmetic on names,
    array subscripts), or None."""

    @property
    def shown(self) -> str:
        """The value where it is known, the source text where it is not."""
        return self.value if self.value is not None else self.text


def literal(text: str) -> Word:
    return Word(text, text)


class Reader(Protocol):
    """What evaluating a word needs from the script it is in."""

    def text(self, node: Node) -> str: ...

    def lookup(self, name: str) -> str | None: ...


def evaluate(nodes: list[Node], reader: Reader) -> list[Word]:
    """The words that adjacent nodes make together (brace expansion may turn one word into several)."""
    text, value, glob, braces, produced = "", "", False, False, False
    for index, node in enumerate(nodes):
        text += reader.text(node)
        if node.type == "$" and index + 1 < len(nodes) and nodes[index + 1].type == "string":
            continue  # `$"..."` is a translated string: the `$` only marks it
        piece, piece_glob, piece_braces, piece_produced = _piece(node, reader)
        produced = produced or piece_produced
        glob, braces = glob or piece_glob, braces or piece_braces
        value = None if value is None or piece is None else value + piece
    expanded = any(_has_expansion(node) for node in nodes)
    evaluates = next((found for node in nodes if (found := evaluation.evaluates(node, reader.text))), None)
    if value is None:
        stream = len(nodes) == 1 and nodes[0].type == "process_substitution"
        return [Word(text, None, glob, produced, stream, expanded, evaluates)]
    if braces:
        return [Word(text, one, glob, False, False, expanded, evaluates) for one in expand_braces(value)]
    if any(_splits(node, reader) for node in nodes):  # `x="rm -rf ~"; $x` runs rm with two arguments
        return [Word(text, part, glob, False, False, expanded, evaluates) for part in value.split()] or [
            Word(text, "", glob, False, False, expanded, evaluates)
        ]
    return [Word(text, value, glob, False, False, expanded, evaluates)]


def _splits(node: Node, reader: Reader) -> bool:
    """Whether an unquoted expansion in this node has a value with blanks: bash splits it into words."""
    if node.type in ("simple_expansion", "expansion"):
        found = _variable(node, reader)
        return found is not None and any(blank in found for blank in " \t\n")
    return node.type in ("concatenation", "command_name") and any(_splits(c, reader) for c in node.children)


def _piece(node: Node, reader: Reader) -> tuple[str | None, bool, bool, bool]:
    """(value or None, has unquoted glob, has unquoted brace, comes from a command's output)."""
    kind = node.type
    source = reader.text(node)
    if kind in ("word", "number", "$", "brace_expression", "file_descriptor"):
        plain = unescape_unquoted(source)
        return plain, bool(GLOB.search(source)), "{" in source, False
    if kind == "raw_string":
        return source[1:-1], False, False, False
    if kind == "ansi_c_string":
        return decode_ansi_c(source[2:-1]), False, False, False
    if kind == "translated_string":
        return _piece(node.named_children[-1], reader) if node.named_children else (None, False, False, False)
    if kind == "string":
        return _double_quoted(node, reader), False, False, _has_substitution(node)
    if kind in ("concatenation", "command_name"):
        pieces = [_piece(child, reader) for child in node.children]
        values = [piece[0] for piece in pieces]
        value = None if any(v is None for v in values) else "".join(v or "" for v in values)
        return value, any(p[1] for p in pieces), any(p[2] for p in pieces), any(p[3] for p in pieces)
    if kind in ("simple_expansion", "expansion"):
        return _variable(node, reader), False, False, _has_substitution(node)
    return None, False, False, kind in SUBSTITUTIONS or _has_substitution(node)


def _double_quoted(node: Node, reader: Reader) -> str | None:
    value = ""
    for child in node.children:
        if child.type == '"':
            continue
        if child.type == "string_content":  # inside double quotes only \$ \` \" \\ and \newline are escapes
            value += re.sub(r'\\([$`"\\\n])', lambda m: "" if m[1] == "\n" else m[1], reader.text(child))
            continue
        piece = _variable(child, reader) if child.type in ("simple_expansion", "expansion") else None
        if piece is None:
            return None
        value += piece
    return value


def _variable(node: Node, reader: Reader) -> str | None:
    """A plain `$name` or `${name}`; every other form (defaults, slices, indirection) is dynamic."""
    names = [child for child in node.children if child.type not in ("$", "${", "}")]
    if len(names) == 1 and names[0].type == "variable_name":
        return reader.lookup(reader.text(names[0]))
    return None


EXPANSIONS = {"simple_expansion", "expansion", "arithmetic_expansion", *SUBSTITUTIONS}


def _has_expansion(node: Node) -> bool:
    if node.type in EXPANSIONS:
        return True
    return any(_has_expansion(child) for child in node.named_children)


def _has_substitution(node: Node) -> bool:
    if node.type in SUBSTITUTIONS:
        return True
    return any(_has_substitution(child) for child in node.named_children)


def unescape_unquoted(text: str) -> str:
    """Backslash removal outside quotes: `\\rm` is rm, and a backslash-newline joins lines."""
    return re.sub(r"\\(.)", lambda m: "" if m[1] == "\n" else m[1], text, flags=re.DOTALL)


_ANSI_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ANSI_SIMPLE |= {"v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL)


def decode_ansi_c(body: str) -> str:
    """The value of `$'...'`: backslash escapes decoded as bash does."""

    def one(match: re.Match[str]) -> str:
        escape = match[1]
        if escape[0] in "xuU" and len(escape) > 1:
            code = int(escape[1:], 16)
            return chr(code) if code < 0x110000 else ""
        if escape[0] in "01234567":
            return chr(int(escape, 8) & 0xFF)
        if escape[0] == "c" and len(escape) == 2:
            return chr(ord(escape[1].upper()) & 0x1F)
        return _ANSI_SIMPLE.get(escape, "\\" + escape)

    return _ANSI.sub(one, body)


def expand_braces(value: str) -> list[str]:
    """Bash brace expansion (`{a,b}`, `{1..3}`), capped at BRACE_LIMIT words."""
    results = _expand(value)
    return results if len(results) <= BRACE_LIMIT else [value]


def _expand(value: str) -> list[str]:
    for start, char in enumerate(value):
        if char != "{":
            continue
        end, commas = _matching(value, start)
        if end is None:
            continue
        inner = value[start + 1 : end]
        options = _split_commas(inner, commas) if commas else _sequence(inner)
        if options is None:
            continue
        prefix, suffixes = value[:start], _expand(value[end + 1 :])
        results: list[str] = []
        for option in options:
            for head in _expand(option):
                results += [prefix + head + suffix for suffix in suffixes]
                if len(results) > BRACE_LIMIT:
                    return results
        return results
    return [value]


def _matching(value: str, start: int) -> tuple[int | None, list[int]]:
    depth, commas = 0, []
    for index in range(start, len(value)):
        char = value[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index, commas
        elif char == "," and depth == 1:
            commas.append(index - start - 1)
    return None, []


def _split_commas(inner: str, commas: list[int]) -> list[str]:
    bounds = [-1, *commas, len(inner)]
    return [inner[bounds[i] + 1 : bounds[i + 1]] for i in range(len(bounds) - 1)]


def _sequence(inner: str) -> list[str] | None:
    match = re.fullmatch(r"(-?\d+|[a-zA-Z])\.\.(-?\d+|[a-zA-Z])(?:\.\.(-?\d+))?", inner)
    if not match:
        return None
    first, last, step = match[1], match[2], abs(int(match[3] or 1)) or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        low, high = int(first), int(last)
        span = range(low, high + 1, step) if low <= high else range(low, high - 1, -step)
        return [str(number) for number in span[: BRACE_LIMIT + 1]]
    if first.isalpha() and last.isalpha():
        low, high = ord(first), ord(last)
        span = range(low, high + 1, step) if low <= high else range(low, high - 1, -step)
        return [chr(code) for code in span[: BRACE_LIMIT + 1]]
    return None


def unescape_backticks(text: str) -> str:
    """The text between backticks as the shell parses it: `\\``, `\\$` and `\\\\` lose their backslash."""
    return re.sub(r"\\([`$\\])", r"\1", text)
