"""`mini-agent undo`: undo the last turns of a stored session from the command line, or list what can be undone.

Works on the session's log as the REPL's /undo does: the checkpoints it holds, minus the undos already made.
The undo is logged in the session file (with what the model is to be told), so a later `--continue` neither
undoes those turns again nor leaves the model unaware of it. A session another process still has open (a REPL
running on it) is refused, as `--continue` refuses it: two undo stacks on one log would disagree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from mini_agent.errors import ExitStatus
from mini_agent.settings import Settings


def run_undo(
    settings: Settings, session: str | None, turns: int, list_only: bool, as_json: bool, out: TextIO, err: TextIO
) -> ExitStatus:
    """Undo `turns` turns of `session` (this directory's latest when None); SUCCESS only when every change of
    those turns was reversed."""
    from mini_agent.app.lifecycle import settle_interrupted_turn, undoable_turns, undone_entry
    from mini_agent.sessions import SessionStore
    from mini_agent.undo import UndoStack, fully_undone, project_snapshots, report_lines, undo_notice

    store = SessionStore(settings.data_dir, settings.secret_set)
    target = session if session is not None else store.latest(settings.cwd)
    if target is None:
        print("mini-agent: no session in this directory, so nothing to undo.", file=err)
        return ExitStatus.ERROR
    loaded = store.load(target, settings.cwd)
    stored = undoable_turns(loaded.journal.entries)  # rewound branches' turns too
    snapshots = project_snapshots(settings.data_dir, Path(settings.cwd))
    if list_only:
        return _list(loaded.info.id, stored, snapshots, as_json, out)
    writer = store.reopen(loaded)  # SessionBusy while another process has the session open
    try:
        checkpoints = [checkpoint for checkpoint, _prompt in stored]
        settled = settle_interrupted_turn(loaded.journal.entries, snapshots, writer)  # a run killed mid-turn
        report = UndoStack(snapshots, [*checkpoints, *([settled] if settled else [])]).undo(turns)
        if report.result is not None:
            writer.write(undone_entry(report.turns, undo_notice(report, "mini-agent undo")))
            writer.sync()
    finally:
        writer.close()
    if as_json:
        out.write(json.dumps(_record(loaded.info.id, report), ensure_ascii=False) + "\n")
    else:
        print(f"Session {loaded.info.id}: undid {report.turns} turn(s).", file=out)
        for line in report_lines(report):
            print(line, file=out)
    return ExitStatus.SUCCESS if fully_undone(report) else ExitStatus.ERROR


def _list(session_id: str, stored: list[tuple], snapshots, as_json: bool, out: TextIO) -> ExitStatus:
    """The turns that can be undone, newest first (number 1 is what `mini-agent undo` undoes)."""
    from mini_agent.undo import SnapshotError
    from mini_agent.undo.stack import shown

    turns = []
    for number, (checkpoint, prompt) in enumerate(reversed(stored), 1):
        try:
            changes = [(change.path, change.kind) for change in snapshots.changes(checkpoint.before, checkpoint.after)]
        except SnapshotError as error:
            changes, problem = [], str(error)
        else:
            problem = ""
        turns.append({"number": number, "prompt": prompt, "changes": changes, "problem": problem})
    if as_json:
        out.write(json.dumps({"session_id": session_id, "turns": turns}, ensure_ascii=False) + "\n")
        return ExitStatus.SUCCESS
    if not turns:
        print(f"Session {session_id}: no turn can be undone.", file=out)
        return ExitStatus.SUCCESS
    print(f"Session {session_id}: turns that can be undone, newest first (`--turns N` undoes the first N):", file=out)
    for turn in turns:
        prompt = shown(" ".join(turn["prompt"].split())[:100])
        print(f"{turn['number']:>3}. {prompt}", file=out)
        for path, kind in turn["changes"]:
            print(f"       {kind} {shown(path)}", file=out)
        if turn["problem"]:
            print(f"       (cannot tell what changed: {turn['problem']})", file=out)
    return ExitStatus.SUCCESS


def _record(session_id: str, report) -> dict:
    result = report.result
    return {
        "session_id": session_id,
        "turns_undone": report.turns,
        "restored": [{"path": change.path, "kind": change.kind} for change in result.undone] if result else [],
        "conflicts": list(result.conflicts) if result else [],
        "failed": [{"path": path, "reason": why} for path, why in result.failed] if result else [],
        "not_covered": [{"path": skip.path, "reason": skip.why} for skip in result.not_covered] if result else [],
        "problem": report.problem,
        "remaining": report.remaining,
    }
