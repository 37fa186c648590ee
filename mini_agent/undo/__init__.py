"""Undo through a shadow git repository: snapshots of the working tree around each turn that changes files.

Covers every change in the project directory, whichever tool made it (bash included), in git repositories and
plain directories alike, without touching the project's own .git.
"""

from mini_agent.undo.restore import RestoreResult
from mini_agent.undo.shadow import SnapshotError, project_root, store_for
from mini_agent.undo.snapshots import Change, Skipped, Snapshots
from mini_agent.undo.stack import Checkpoint, UndoReport, UndoStack, Unrecorded, undo_notice

__all__ = [
    "Change",
    "Checkpoint",
    "RestoreResult",
    "Skipped",
    "SnapshotError",
    "Snapshots",
    "UndoReport",
    "UndoStack",
    "Unrecorded",
    "project_root",
    "store_for",
    "undo_notice",
]
