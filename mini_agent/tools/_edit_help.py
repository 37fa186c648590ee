"""Where edit_file's old_string occurs, and what to tell the model when it occurs zero or several times.

A failed match is the commonest edit error; the message shows the nearest real text (with its line
numbers) so the next call can copy it exactly instead of guessing again.
"""

from __future__ import annotations

import heapq
import re

from mini_agent.tools.base import ToolError
from mini_agent.tools.file_view import numbered

_LISTED_MATCHES = 10
_COUNTED_MATCHES = 1000
_EXCERPT_LINES = 30
_SIMILARITY_CUTOFF = 0.5
_MAX_SEARCHED_CHARS = 5_000_000
"""Above this, near-match searches are skipped: a hint is not worth a long wait."""
_MAX_SIMILARITY_LINES = 200_000
_SCORED_LINES = 50
_WORD = re.compile(r"\w+")
_LINE_NUMBER_PREFIX = re.compile(r"\s*\d+\t")
_WHITESPACE = re.compile(r"\s+")


def find_spans(text: str, old: str, replace_all: bool) -> list[tuple[int, int]]:
    """The (start, end) spans to replace: every occurrence, or the single one; ToolError otherwise."""
    first = text.find(old)
    if first == -1:
        raise ToolError(not_found_message(text, old))
    if replace_all:
        spans = []
        start = first
        while start != -1:  # left to right, without overlap, like str.replace
            spans.append((start, start + len(old)))
            start = text.find(old, start + len(old))
        return spans
    # Overlapping occurrences count too: in "aaa", "aa" could mean either of two places.
    starts = [first]
    while len(starts) < _COUNTED_MATCHES and (start := text.find(old, starts[-1] + 1)) != -1:
        starts.append(start)
    if len(starts) > 1:
        raise ToolError(ambiguous_message(text, starts))
    return [(first, first + len(old))]


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def ambiguous_message(text: str, starts: list[int]) -> str:
    lines = ", ".join(str(line_of(text, start)) for start in starts[:_LISTED_MATCHES])
    more = ", ..." if len(starts) > _LISTED_MATCHES else ""
    count = f"at least {len(starts)}" if len(starts) >= _COUNTED_MATCHES else str(len(starts))
    return (
        f"old_string occurs {count} times in the file (starting on lines {lines}{more}). Include more of the "
        "surrounding lines in old_string so it matches exactly one place, or set replace_all to true to "
        "replace every occurrence."
    )


def not_found_message(text: str, old: str) -> str:
    message = (
        "old_string was not found in the file. It must match the file's text exactly, including whitespace "
        "and indentation."
    )
    first_line = next((line for line in old.split("\n") if line.strip()), "")
    if _LINE_NUMBER_PREFIX.match(first_line):
        message += (
            " It seems to include read_file's line-number prefixes (spaces, a number, a tab): copy only the text "
            "after the tab."
        )
    lines = text.split("\n")
    if (near := _same_apart_from_whitespace(text, old)) is not None:
        first, last = near
        return (
            message
            + f"\nThe same text with different whitespace is on {_lines(first, last)}:\n"
            + _excerpt(lines, first, last)
            + "\nCopy old_string exactly from there (without the line-number prefixes)."
        )
    if (similar := _most_similar_lines(lines, old)) is not None:
        first, last, ratio = similar
        return (
            message
            + f"\nThe most similar text ({ratio:.0%} alike) is on {_lines(first, last)}:\n"
            + _excerpt(lines, first, last)
            + "\nIf that is the place, copy old_string exactly from there (without the line-number prefixes)."
        )
    return message + " Nothing similar was found: read the file again to copy the exact text."


def _lines(first: int, last: int) -> str:
    return f"line {first}" if first == last else f"lines {first}-{last}"


def _excerpt(lines: list[str], first: int, last: int) -> str:
    shown_last = min(last, first + _EXCERPT_LINES - 1)
    excerpt = numbered(lines[first - 1 : shown_last], first)
    return excerpt + (f"\n(... {last - shown_last} more lines)" if shown_last < last else "")


def _same_apart_from_whitespace(text: str, old: str) -> tuple[int, int] | None:
    """The lines where old_string occurs once all whitespace is ignored (indentation, tabs, line breaks)."""
    wanted = _WHITESPACE.sub("", old)
    if len(wanted) < 3 or len(text) > _MAX_SEARCHED_CHARS:
        return None
    found = _WHITESPACE.sub("", text).find(wanted)
    if found == -1:
        return None
    first = last = 0
    seen = 0  # non-whitespace characters before the current line
    for number, line in enumerate(text.split("\n"), 1):
        seen += len(_WHITESPACE.sub("", line))
        if not first and seen > found:
            first = number
        if seen >= found + len(wanted):
            last = number
            break
    return first, last


def _most_similar_lines(lines: list[str], old: str) -> tuple[int, int, float] | None:
    """The window of lines most like old_string, found around the lines most like its first non-blank line."""
    from difflib import SequenceMatcher

    old_lines = old.strip("\n").split("\n")
    anchor_at, anchor = next(((i, line.strip()) for i, line in enumerate(old_lines) if line.strip()), (0, ""))
    if not anchor or len(lines) > _MAX_SIMILARITY_LINES:
        return None
    # Shared words pick the few lines worth the (slow) exact ratio; they tell near-identical lines apart.
    anchor_words = set(_WORD.findall(anchor))
    overlaps = ((len(anchor_words.intersection(_WORD.findall(line))), index) for index, line in enumerate(lines))
    promising = heapq.nsmallest(_SCORED_LINES, ((-shared, index) for shared, index in overlaps if shared))
    line_matcher = SequenceMatcher(None, autojunk=False)
    line_matcher.set_seq2(anchor)
    candidates = []
    for _, index in promising:
        line_matcher.set_seq1(lines[index].strip())
        if (ratio := line_matcher.ratio()) >= _SIMILARITY_CUTOFF:
            candidates.append((ratio, index))
    best: tuple[float, int] | None = None
    for _, index in sorted(candidates, reverse=True)[:5]:
        start = max(0, index - anchor_at)
        window = "\n".join(lines[start : start + len(old_lines)])
        ratio = SequenceMatcher(None, window, old.strip("\n")).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, start)
    if best is None or best[0] < _SIMILARITY_CUTOFF:
        return None
    ratio, start = best
    return start + 1, min(start + len(old_lines), len(lines)), ratio
