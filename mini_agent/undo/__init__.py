"""Undo through a shadow git repository: snapshots of the working tree around each turn that changes files.

Covers every change in the project directory, whichever tool made it (bash included), in git repositories and
plain directories alike, without touching the project's own .git.

    shadow.py     the shadow repository and its git runs
    snapshots.py  taking a snapshot, and listing what differs between two
    changes.py    what differs, in words an undo acts on: Change, Skipped, Delta
    modes.py      the permission bits a snapshot records beside git's executable bit
    restore.py    putting files back as a snapshot had them
    stack.py      the per-turn undo stack

May import processes (git runs), files (opens that follow no symlink) and the leaves; nothing above.
"""

from mini_agent.undo.changes import IGNORED, Change, Skipped
from mini_agent.undo.restore import RestoreResult, restore
from mini_agent.undo.shadow import SnapshotError, project_root, store_for
from mini_agent.undo.snapshots import Snapshots, project_snapshots
from mini_agent.undo.stack import (
    Checkpoint,
    UndoReport,
    UndoStack,
    Unrecorded,
    fully_undone,
    report_lines,
    undo_notice,
)

__all__ = [
    "IGNORED",
    "Change",
    "Checkpoint",
    "RestoreResult",
    "Skipped",
    "SnapshotError",
    "Snapshots",
    "UndoReport",
    "UndoStack",
    "Unrecorded",
    "fully_undone",
    "project_root",
    "project_snapshots",
    "report_lines",
    "restore",
    "store_for",
    "undo_notice",
]
