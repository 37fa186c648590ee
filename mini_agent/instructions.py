"""Explicit instructions in the user's own words, and whether a summary kept them.

Compaction must never lose a rule the user stated ("don't touch the tests", "只改 src 目录"). Sentences of the
user's typed text that carry a directive are collected as they arrive; after each summary, any that the summary
does not contain verbatim are added back to it word for word.
"""

from __future__ import annotations

import re

MAX_INSTRUCTION_CHARS = 600
"""A longer sentence is more a task description than a rule; the original request keeps it anyway."""

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_DIRECTIVE_EN = re.compile(
    r"\b(?:don't|dont|do not|never|always|must|mustn't|should|shouldn't|make sure|ensure|only|avoid|keep|"
    r"prefer|instead|without|stop|remember|please|need to|have to|no more than|at most|at least|"
    r"under no circumstances|use|run|leave)\b",
    re.IGNORECASE,
)
_DIRECTIVE_ZH = re.compile(
    r"不要|别|必须|一定|务必|只|请|禁止|不准|不许|不能|记得|确保|保持|避免|应该|需要|用|保留|不得"
)


def explicit_instructions(text: str) -> list[str]:
    """The sentences of a user message that state a directive, verbatim and in order."""
    found: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        sentence = sentence.strip()
        if not sentence or len(sentence) > MAX_INSTRUCTION_CHARS:
            continue
        if (_DIRECTIVE_EN.search(sentence) or _DIRECTIVE_ZH.search(sentence)) and sentence not in found:
            found.append(sentence)
    return found


def _normalise(text: str) -> str:
    return " ".join(text.split())


def missing_from(summary: str, instructions: list[str]) -> list[str]:
    """The instructions that do not appear verbatim (up to whitespace) in the summary."""
    haystack = _normalise(summary)
    return [item for item in instructions if _normalise(item) not in haystack]
