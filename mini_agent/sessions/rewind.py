"""Rewinding a session's conversation in its append-only journal: nothing is removed from the file.

A rewind is one log entry, `{"type": "rewind", "keep": K, "prompt": ...}`: the conversation goes on from the
first K entries of the log as it stood just before that entry (earlier rewinds already applied). The entries
after them stay in the file, a branch no longer continued; `conversation_entries` gives the log the
conversation is rebuilt from (what `Session.restore`, the ledger replay and the recap read), so a resumed
session continues exactly where the rewind left it. Undo bookkeeping (checkpoints, undos) is read from the whole
file instead: files changed on an abandoned branch can still be restored.

A rewind is written with one write, like every entry, so a kill -9 leaves it either whole or cut (a cut last
line is set aside when the file is next continued): the session resumes either before or after the rewind.
"""

from __future__ import annotations

from dataclasses import dataclass

REWIND = "rewind"
PROMPT_CHARS = 72
"""A prompt in the rewind list: its first words, on one line."""


@dataclass(frozen=True)
class Prompt:
    """A prompt the user typed, as the conversation that stands now holds it."""

    number: int
    """1 for the first prompt of the conversation."""
    keep: int
    """The conversation entries before it: a rewind to just before this prompt keeps these."""
    position: int
    """Its index in the whole log (the file's entries), to find what was recorded after it."""
    typed: str


def rewind_entry(prompt: Prompt, notice: str = "") -> dict:
    """The log's record of a rewind to just before `prompt`; `notice` is what the model is told of it."""
    return {"type": REWIND, "keep": prompt.keep, "prompt": prompt.typed, **({"notice": notice} if notice else {})}


def conversation_positions(entries: list[dict]) -> list[int]:
    """The indices into `entries` (a whole log) of the entries the conversation stands on, rewinds applied.

    A rewind whose `keep` is not a count of entries it could keep (a hand-edited or foreign file) is ignored,
    as the entries of an unknown type are.
    """
    kept: list[int] = []
    for index, entry in enumerate(entries):
        if entry.get("type") != REWIND:
            kept.append(index)
            continue
        keep = entry.get("keep")
        if isinstance(keep, int) and not isinstance(keep, bool) and 0 <= keep <= len(kept):
            del kept[keep:]
    return kept


def conversation_entries(entries: list[dict]) -> list[dict]:
    """The log the conversation is rebuilt from: `entries` with every rewound branch left out."""
    if not any(entry.get("type") == REWIND for entry in entries):
        return entries
    return [entries[index] for index in conversation_positions(entries)]


def prompts(entries: list[dict]) -> list[Prompt]:
    """The prompts the user typed in the conversation that stands now, oldest first."""
    found: list[Prompt] = []
    for keep, position in enumerate(conversation_positions(entries)):
        entry = entries[position]
        if entry.get("type") == "message" and isinstance(entry.get("typed"), str):
            found.append(Prompt(len(found) + 1, keep, position, entry["typed"]))
    return found


def short(text: str, chars: int = PROMPT_CHARS) -> str:
    """A prompt on one line, cut to `chars` (not yet made safe for a terminal: the caller's sanitiser does)."""
    line = " ".join(text.split())
    return line if len(line) <= chars else line[: chars - 1] + "…"
