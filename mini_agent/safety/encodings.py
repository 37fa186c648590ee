"""The shapes a secret takes in text, and where those shapes sit in a text.

A secret is searched as a set of literal strings, one per shape: raw, JSON-escaped, URL-encoded, reversed (`rev`),
hex (lower and upper case), base64 (standard and URL-safe) and base32. For base64 and base32 the literal is the
part of the encoding that depends on the secret alone, once per byte alignment the secret can have inside a longer
encoded text (three for base64, five for base32), so `env | base64` is covered wherever the value sits.

Letter case is ignored (ASCII letters): a hex token or base32 text means the same in either case, and a secret
upper-cased (`tr a-z A-Z`, `.upper()`) is still the secret, recovered by trying at most two cases per letter, which
for base64 a decoder's own check narrows down. Literals and text are both folded with `fold`, which keeps lengths
(other letters' case is folded too, unless the text holds a character whose lower case is two, like `İ`).

Literals are searched in the text with its spaces and line breaks removed, so output wrapped by `base64` (76
columns) or `xxd -p` (60) is found too; `str.find` keeps that fast for megabytes. Hex dumps that put offsets and an
ASCII column between the bytes (`xxd`, `hexdump -C`, `od -c`, `od -t x1`) are decoded line by line instead.
"""

from __future__ import annotations

import base64
import json
import re
from bisect import bisect_right
from urllib.parse import quote, quote_plus

SPACES = " \t\n\r\f\v"
_STRIP = str.maketrans("", "", SPACES)
_SPACE_RUNS = re.compile(r"[ \t\n\r\f\v]+")
MIN_ENCODED = 8
"""Shorter encoded literals would match ordinary text by chance; raw values follow the caller's own minimum."""


def literals(secret: str) -> dict[str, str]:
    """Every literal to search for one secret, mapped to the name of its encoding."""
    data = secret.encode("utf-8", "surrogatepass")
    found: dict[str, str] = {}

    def add(form: str, encoding: str) -> None:
        if form and form not in found and (encoding == "raw" or len(form) >= MIN_ENCODED):
            found[form] = encoding

    add(secret, "raw")
    add(json.dumps(secret)[1:-1], "JSON-escaped")
    for form in (quote(secret, safe=""), quote(secret), quote_plus(secret)):
        add(form, "URL-encoded")
        add(re.sub(r"%[0-9A-F]{2}", lambda match: match.group().lower(), form), "URL-encoded")
    add(secret[::-1], "reversed")
    add(data.hex(), "hex")
    add(data.hex().upper(), "hex")
    for shift in range(3):
        middle = _middle(base64.b64encode(b"\0" * shift + data), shift, len(data), 6)
        add(middle, "base64")
        add(middle.replace("+", "-").replace("/", "_"), "base64")
    for shift in range(5):
        add(_middle(base64.b32encode(b"\0" * shift + data), shift, len(data), 5), "base32")
    return found


def _middle(encoded: bytes, shift: int, length: int, bits: int) -> str:
    """The characters of an encoding that carry only the secret's bits (not the padding before or after it)."""
    first = -(-shift * 8 // bits)
    last = (shift + length) * 8 // bits
    return encoded[first:last].decode("ascii")


_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fold(text: str) -> str:
    """The text lower-cased with its length kept, so positions in the result are positions in the text. `str.lower`
    (fast) when it keeps the length; when it would turn a character into two (`İ`), only ASCII letters are
    lower-cased (slow, rare): a secret's literals are folded both ways (`folds`), so either way finds it."""
    if text.isascii():
        return text.lower()
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_FOLD)


def folds(literal: str) -> set[str]:
    """A literal as `fold` may turn it into inside a longer text: whole-text lower-casing, or ASCII letters only."""
    return {fold(literal), literal.translate(_FOLD)}


def strip_spaces(text: str) -> str:
    return text.translate(_STRIP)


class SpaceMap:
    """Maps positions in `strip_spaces(text)` back to positions in `text`; built only when something was found."""

    def __init__(self, text: str) -> None:
        self._starts: list[int] = []  # where each run of spaces begins, counted in the stripped text
        self._removed: list[int] = []  # spaces removed up to and including that run
        removed = 0
        for run in _SPACE_RUNS.finditer(text):
            self._starts.append(run.start() - removed)
            removed += run.end() - run.start()
            self._removed.append(removed)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of stripped characters [start, end)."""
        return self._at(start), self._at(end - 1) + 1

    def _at(self, position: int) -> int:
        index = bisect_right(self._starts, position)
        return position + (self._removed[index - 1] if index else 0)


# ---- hex dumps ---------------------------------------------------------------------------------------------

_DUMP_HINT = re.compile(r"^[0-9a-fA-F]{7,16}[: ]", re.MULTILINE)
_XXD = re.compile(r"[0-9a-fA-F]{6,16}: ((?:[0-9a-fA-F]{2})+(?: (?:[0-9a-fA-F]{2})+)*)(?: {2}|$)")
_HEXDUMP_C = re.compile(r"[0-9a-fA-F]{8}  ((?:[0-9a-fA-F]{2} {1,2})+)\s*\|")
_OD_HEX = re.compile(r"[0-7]{7,}((?: [0-9a-fA-F]{2})+)\s*$")
_OD_CHAR = re.compile(r"[0-7]{7,}((?:   [^\\ ]|    |  \\.| [0-7]{3}|  \*\*)+)\s*$")
_OD_ESCAPES = {"0": 0, "a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13}


def dump_spans(text: str, needles: list[bytes]) -> list[tuple[int, int, int]]:
    """(needle index, start, end) for each needle found in the bytes of a hex dump in the text: one span per line
    the needle's bytes sit on, covering the line's content (its offset is kept)."""
    if not _DUMP_HINT.search(text):
        return []
    found: list[tuple[int, int, int]] = []
    block = bytearray()
    lines: list[tuple[int, int, int]] = []  # (first byte in block, content start, line end)
    position = 0
    for line in text.split("\n"):
        decoded = _dump_line(line)
        if decoded is None:
            if lines:
                found += _search_block(bytes(block), lines, needles)
            block, lines = bytearray(), []
        else:
            data, content = decoded
            lines.append((len(block), position + content, position + len(line)))
            block += data
        position += len(line) + 1
    if lines:
        found += _search_block(bytes(block), lines, needles)
    return found


def _search_block(block: bytes, lines: list[tuple[int, int, int]], needles: list[bytes]) -> list[tuple[int, int, int]]:
    firsts = [line[0] for line in lines]
    found = []
    for index, needle in enumerate(needles):
        start = block.find(needle)
        while start != -1:
            end = start + len(needle)
            first, last = bisect_right(firsts, start) - 1, bisect_right(firsts, end - 1) - 1
            found += [(index, content, line_end) for _, content, line_end in lines[first : last + 1]]
            start = block.find(needle, end)
    return found


def _dump_line(line: str) -> tuple[bytes, int] | None:
    """The bytes a dump line shows and where its content starts (after the offset), or None for other lines."""
    line = line.rstrip("\r")
    for pattern in (_XXD, _HEXDUMP_C, _OD_HEX):
        match = pattern.match(line)
        if match:
            return bytes.fromhex(match.group(1).replace(" ", "")), match.start(1)
    match = _OD_CHAR.match(line)
    if match:
        content = match.group(1)
        data = bytearray()
        for cell in (content[index : index + 4] for index in range(0, len(content), 4)):
            shown = cell.strip()
            if not shown:
                data.append(32)
            elif shown == "**":
                continue  # the rest of a multibyte character already shown
            elif shown.startswith("\\"):
                data.append(_OD_ESCAPES.get(shown[1:], ord(shown[1:]) if len(shown) == 2 else 0))
            elif len(shown) == 3 and shown.isdigit():
                data.append(int(shown, 8) & 0xFF)
            else:
                data += shown.encode("utf-8", "surrogatepass")
        return bytes(data), match.start(1)
    return None
