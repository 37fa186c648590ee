"""The tree-sitter boundary: tree-sitter-bash loaded once, on first use, and given only text it parses safely.

tree-sitter-bash 0.25 can crash the whole process (SIGSEGV) on a `{` followed, anywhere later, by a character
outside the Basic Multilingual Plane, such as most emoji (upstream issue tree-sitter/tree-sitter-bash#337).
So every such character is swapped for an unused private-use character before parsing, and swapped back
whenever text is read from the tree: the classifier sees the command exactly as written.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from mini_agent.safety.shell.words import Node

PLACEHOLDERS = range(0xE000, 0xF900)
"""Private-use code points, one of which stands in for each distinct character beyond U+FFFF."""

_language: Any = None
_language_lock = threading.Lock()
_per_thread = threading.local()


def parser() -> Any:
    """This thread's tree-sitter-bash parser. The grammar is loaded once, on first use (importing tree-sitter
    costs milliseconds); a parser holds parsing state, so each thread gets its own (they cost microseconds)."""
    global _language
    parser = getattr(_per_thread, "parser", None)
    if parser is None:
        import tree_sitter

        with _language_lock:
            if _language is None:
                import tree_sitter_bash

                _language = tree_sitter.Language(tree_sitter_bash.language())
        parser = _per_thread.parser = tree_sitter.Parser(_language)
    return parser


@dataclass(frozen=True)
class Source:
    """A script as handed to the parser, and the way back from the parser's bytes to the script's text."""

    data: bytes
    restore: dict[int, str] = field(default_factory=dict)

    def text(self, node: Node) -> str:
        raw: bytes = node.text
        try:
            text = raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", "replace")
        return text.translate(self.restore) if self.restore else text


def prepare(script: str) -> Source | None:
    """The script with placeholders for characters beyond U+FFFF; None if there are too many kinds of them."""
    astral = sorted({char for char in script if ord(char) > 0xFFFF})
    if not astral:
        return Source(script.encode("utf-8", "surrogatepass"))
    used = set(script)
    free = (chr(point) for point in PLACEHOLDERS if chr(point) not in used)
    swap = dict(zip(astral, free, strict=False))
    if len(swap) < len(astral):
        return None
    safe = script.translate({ord(char): stand_in for char, stand_in in swap.items()})
    return Source(safe.encode("utf-8", "surrogatepass"), {ord(stand_in): char for char, stand_in in swap.items()})


def parse(source: Source) -> Any:
    return parser().parse(source.data)
