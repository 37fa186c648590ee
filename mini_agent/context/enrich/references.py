"""References back to an earlier object ("that file", "it", 那个文件): which files those could be.

"Fix it" means nothing without the conversation; the model usually has it, but after compaction or a long
detour the files the agent most recently read or changed are the best guess, so they are listed, newest first.
"""

from __future__ import annotations

import re
from pathlib import Path

from mini_agent.context.blocks import P1, ContextBlock, Enricher, Skip, TurnInput
from mini_agent.xmltext import escape

MAX_FILES = 5

_ENGLISH = (
    "the same file",
    "the previous one",
    "those files",
    "these files",
    "that function",
    "this function",
    "that file",
    "this file",
    "the file",
    "them",
    "it",
)
_CHINESE = ("那个文件", "这个文件", "该文件", "它们", "那个", "这个", "上面的", "刚才的", "之前的", "它")
# ASCII letters as the boundary (not \b): "it" must not match inside "edit" or "item", but must match in
# "改一下it" where a CJK character, a word character to \b, sits right before it.
_ENGLISH_PATTERN = r"(?<![A-Za-z0-9_])(?:{})(?![A-Za-z0-9_])".format(
    "|".join(re.escape(phrase).replace(r"\ ", r"\s+") for phrase in _ENGLISH)
)
# 其它 ("other") is not a reference to anything.
_CHINESE_PATTERN = "|".join(f"(?<!其){phrase}" if phrase == "它" else phrase for phrase in _CHINESE)
_REFERENCE = re.compile(f"{_ENGLISH_PATTERN}|{_CHINESE_PATTERN}", re.IGNORECASE)


def find_reference(text: str) -> str | None:
    """The first phrase in the text that points back at something earlier, as typed; None if there is none."""
    match = _REFERENCE.search(text)
    return match.group() if match else None


def enrich_references(inp: TurnInput) -> list[ContextBlock]:
    phrase = find_reference(inp.text)
    if phrase is None:
        raise Skip("no reference to an earlier object")
    if not inp.recent_files:
        raise Skip("refers to an earlier object but no file has been read or changed yet")
    recent = list(dict.fromkeys(_relative(path, inp.cwd) for path in inp.recent_files))[:MAX_FILES]
    lead = (
        f'The message refers to something earlier ("{escape(" ".join(phrase.split()))}"); '
        "files most recently read or changed, newest first:"
    )
    return [ContextBlock("recent_files", P1, "\n".join([lead, *(escape(path) for path in recent)]))]


def _relative(path: Path, cwd: Path) -> str:
    # Lexical only (no resolve): this enricher runs inline and must not touch the disk.
    return str(path.relative_to(cwd)) if path.is_absolute() and path.is_relative_to(cwd) else str(path)


references = Enricher("references", enrich_references, inline=True)
