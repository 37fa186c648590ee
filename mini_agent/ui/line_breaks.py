"""Where rich wraps a line of text, for text whose every character is one cell wide: the offsets its
`divide_line` returns with fold (a word longer than the line is cut into pieces), so a paragraph laid out by
ui/markdown_text.py breaks where rich would break it."""

from __future__ import annotations

import re

_NOT_SPACE = re.compile("[^ ]")
_WORD = re.compile(r"\s*\S+\s*")
"""rich's word: a run of non-space with the spaces on either side of it (rich/_wrap.py)."""


def line_breaks(line: str, width: int) -> list[int]:
    """rich's `divide_line` with fold, for characters one cell wide (a cell is a character)."""
    return _breaks_at_spaces(line, width) if line.isascii() else breaks_by_word(line, width)


def breaks_by_word(line: str, width: int) -> list[int]:
    """rich's own walk, word by word: for lines with blanks other than the space."""
    breaks: list[int] = []
    offset = 0
    position = 0
    while (word_match := _WORD.match(line, position)) is not None:
        start, position = word_match.span()
        word = word_match.group(0)
        word_length = len(word.rstrip())
        if width - offset >= word_length:
            offset += len(word)
        elif word_length > width:
            chunks = range(0, len(word), width)
            for chunk in chunks:
                if start + chunk:
                    breaks.append(start + chunk)
            offset = len(word) - chunks[-1]
        elif offset and start:
            breaks.append(start)
            offset = len(word)
    return breaks


def _breaks_at_spaces(line: str, width: int) -> list[int]:
    """The same breaks, found a line at a time, for printable ASCII, where the only blank is the space. A word
    (its letters and the spaces after them; the first also the spaces before) fits while its letters end within
    `width` of the line's start, so each line ends before the word whose letters cross that mark."""
    breaks: list[int] = []
    length = len(line)
    first_letters = length - len(line.lstrip(" "))
    start = 0
    while (mark := start + width) < length:
        if line[mark] == " ":
            after = _NOT_SPACE.search(line, mark)
            if after is None:
                break
            letters = after.start()
        else:
            letters = line.rfind(" ", 0, mark) + 1
        word = 0 if letters == first_letters else letters
        letters_end = line.find(" ", max(mark, letters))
        if letters_end == -1:
            letters_end = length
        if letters_end - word > width:  # longer than a line: folded
            after = _NOT_SPACE.search(line, letters_end)
            chunks = range(word, length if after is None else after.start(), width)
            breaks.extend(chunk for chunk in chunks if chunk)
            start = chunks[-1]
        else:
            breaks.append(word)
            start = word
    return breaks
