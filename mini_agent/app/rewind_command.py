"""/rewind (and Esc Esc on an empty prompt) and /fork: take the session back to before one of its prompts, or
go on in a copy of it.

A rewind restores the conversation, the files, or both. Files go back through the undo stack: every turn that
changed files since that prompt is undone, newest first, and what could not be restored is said. The
conversation goes back through one `rewind` entry in the session's journal (sessions/rewind.py), then the agent
is rebuilt from the file exactly as a resumed process would be, so the next request has the same bytes either
way. The prompt's words are handed back for the input line, to be edited and sent again.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mini_agent.xmltext import system_hint

if TYPE_CHECKING:  # the REPL imports this module at start: sessions/ loads with the agent, behind the prompt
    from mini_agent.sessions.rewind import Prompt

BOTH, CONVERSATION, FILES = "both", "conversation", "files"
SCOPES = (BOTH, CONVERSATION, FILES)
PATHS_TOLD = 20
"""Files named in what the model is told; the rest are counted."""


@dataclass(frozen=True)
class Rewound:
    lines: list[str]
    """What was restored and what could not be, for the user."""
    typed: str | None = None
    """The prompt's words, when the conversation went back to before it: the input line starts with them."""


def rewind(sessions, agent, prompt: Prompt, scope: str) -> Rewound:
    """Rewind the session `sessions` (a SessionLifecycle) keeps for `agent` to just before `prompt`."""
    from mini_agent.app.lifecycle import undone_entry
    from mini_agent.sessions.rewind import conversation_entries, rewind_entry
    from mini_agent.undo import UndoStack, fully_undone, report_lines, undo_notice

    loaded = sessions.current()
    lines: list[str] = []
    kept_changed: list[str] = []  # files the conversation no longer explains, left as they are
    stack = sessions.undo
    if scope in (BOTH, FILES) and not isinstance(stack, UndoStack):
        lines.append("Files: not restored, undo is off in this run.")
    elif scope in (BOTH, FILES):
        keep = turns_before(stack.checkpoints, loaded.journal.entries, prompt.position)
        if keep >= len(stack.checkpoints):
            lines.append("Files: no turn since that prompt changed files; nothing to restore.")
        else:
            report = stack.rewind(keep)
            notice = undo_notice(report, "/rewind")
            if report.result is not None:
                # Logged with its notice even when the conversation goes back too: killed before the rewind line,
                # the session resumes with the files restored and the model told, as after /undo. The rewind
                # line, once written, replaces the notice (the turns it speaks of are taken back).
                sessions.writer.write(undone_entry(report.turns, notice))
                agent.keeper.engine.gatherer.forget()  # the restored files may include AGENTS.md or memory.md
                if notice and scope == FILES:
                    agent.tell_next_turn(system_hint("undo", notice))
            lines += ["Files:", *("  " + line for line in report_lines(report))]
            if not fully_undone(report):
                lines.append("  Not every file is as it was before that prompt (see above).")
            result = report.result
            if result is not None:
                kept_changed = [*result.conflicts, *(path for path, _ in result.failed)]
                kept_changed += [skip.path for skip in result.not_covered]
    elif isinstance(stack, UndoStack):
        keep = turns_before(stack.checkpoints, loaded.journal.entries, prompt.position)
        kept_changed = changed_paths(stack, keep)
    if scope == FILES:
        return Rewound(lines)
    entry = rewind_entry(prompt, _kept_notice(kept_changed, scope))
    sessions.writer.write(entry)
    sessions.writer.sync()
    if sessions.writer.error is None:
        loaded = sessions.current()  # exactly what a resume will read
    else:  # the file stopped (already warned): the conversation goes back in memory all the same
        full = [*loaded.journal.entries, entry]
        loaded = replace(loaded, entries=conversation_entries(full), journal=replace(loaded.journal, entries=full))
    sessions.rebuild(agent, loaded)
    lines.append(f"Conversation: back to before prompt {prompt.number}; its words are in the input to edit.")
    if kept_changed and scope == CONVERSATION:
        lines.append(f"Files changed since then were kept as they are ({len(kept_changed)}); the model is told.")
    return Rewound(lines, prompt.typed)


def turns_before(turns: tuple, entries: list[dict], position: int) -> int:
    """How many of the undo stack's turns (oldest first) were recorded before log position `position`.

    A turn's place is its checkpoint entry in the whole log. A turn whose snapshots failed was never logged:
    it counts as recorded with the next logged turn, so a rewind past it stops there and says so."""
    from mini_agent.app.lifecycle import CHECKPOINT
    from mini_agent.undo import Checkpoint

    logged = {
        (entry.get("before"), entry.get("after")): index
        for index, entry in enumerate(entries)
        if entry.get("type") == CHECKPOINT
    }
    places: list[int] = []
    following = len(entries)
    for turn in reversed(turns):
        if isinstance(turn, Checkpoint):
            following = logged.get((turn.before, turn.after), following)
        places.append(following)
    places.reverse()
    kept = 0
    while kept < len(places) and places[kept] < position:
        kept += 1
    return kept


def changed_paths(stack, keep: int) -> list[str]:
    """The files the stack's turns from `keep` on changed (those a conversation-only rewind leaves changed)."""
    from mini_agent.undo import Checkpoint, SnapshotError

    paths: dict[str, None] = {}
    for turn in stack.checkpoints[keep:]:
        if isinstance(turn, Checkpoint):
            try:
                paths.update((change.path, None) for change in stack.snapshots.changes(turn.before, turn.after))
            except SnapshotError:
                continue
    return list(paths)


def _kept_notice(paths: list[str], scope: str) -> str:
    """What the model hears when files no longer match the conversation it has: empty when they do."""
    if not paths:
        return ""
    named = ", ".join(paths[:PATHS_TOLD]) + (f" and {len(paths) - PATHS_TOLD} more" if len(paths) > PATHS_TOLD else "")
    why = "were kept as they are" if scope == CONVERSATION else "could not be restored"
    return (
        "The user rewound the conversation to before one of their prompts. Files changed after that point "
        f"{why}, so they may differ from what this conversation shows: {named}. Read files again before "
        "editing them."
    )


def prompt_lines(sessions, loaded, found: list[Prompt]) -> list[str]:
    """The rewind list, oldest first: each prompt's number and first words; `files` marks a prompt after which
    files changed (a files rewind to it has something to restore)."""
    from mini_agent.sessions.rewind import short
    from mini_agent.undo import UndoStack

    stack = sessions.undo
    places = []
    if isinstance(stack, UndoStack):
        turns = stack.checkpoints
        places = [turns_before(turns, loaded.journal.entries, p.position) for p in found]
    lines = []
    for index, prompt in enumerate(found):
        changed = bool(places) and places[index] < len(stack.checkpoints)
        lines.append(f"{prompt.number:>3}. {short(prompt.typed)}" + ("  [files changed since]" if changed else ""))
    return lines


# ---- the REPL's commands ----------------------------------------------------------------------------------------


def rewind_command(repl, argument: str) -> None:
    """`/rewind [N] [both|conversation|files]`: without N, list the prompts and ask; Esc or Ctrl-C cancels."""
    from mini_agent.sessions.rewind import prompts
    from mini_agent.ui.rewind_picker import pick_prompt, pick_scope

    agent = repl.agent
    sessions = repl.sessions
    if sessions.writer is None or (sessions.writer.error is None and not sessions.writer.path.exists()):
        _say(repl, "Nothing to rewind: this session has no prompt yet.")
        return
    loaded = sessions.current()  # MiniAgentError, shown by the REPL, when the file no longer holds the session
    found = prompts(loaded.journal.entries)
    if not found:
        _say(repl, "Nothing to rewind: this session has no prompt yet.")
        return
    words = argument.split()
    scope = next((word for word in words if word in SCOPES), None)
    numbers = [word for word in words if word not in SCOPES]
    if len(numbers) > 1 or (numbers and not (numbers[0].isdigit() and 1 <= int(numbers[0]) <= len(found))):
        _say(repl, f"Usage: /rewind [1-{len(found)}] [{'|'.join(SCOPES)}]")
        return
    if numbers:
        number: int | None = int(numbers[0])
    else:
        _say(repl, "Rewind to just before which prompt? (newest last)")
        for line in prompt_lines(sessions, loaded, found):
            _say(repl, line)
        number = pick_prompt(len(found))
    if number is not None and scope is None:
        scope = pick_scope()
    if number is None or scope is None:
        _say(repl, "Rewind cancelled; nothing changed.")
        return
    rewound = rewind(sessions, agent, found[number - 1], scope)
    for line in rewound.lines:
        _say(repl, line)
    if rewound.typed is not None:
        repl.next_input = rewound.typed


def fork_command(repl, argument: str) -> None:
    """`/fork`: go on in a new session with this conversation; this one stays as it is, for --resume."""
    _say(repl, repl.sessions.fork(repl.agent))


def _say(repl, line: str) -> None:
    """A line as it is: the terminal chokepoint names its control characters, and it is not read as markup."""
    from mini_agent.ui.terminal_text import visible

    repl.console.print(visible(line), highlight=False, markup=False)
