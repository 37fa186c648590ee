"""The todo list as data: one `Todo` per task, the whole list replaced by each todo_write call. A leaf: the tool
result (base.py), the session (its journal) and the front ends (the list shown) all name it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

Status = Literal["pending", "in_progress", "completed"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed")


@dataclass(frozen=True)
class Todo:
    content: str
    """The task, in the imperative ("Run the tests")."""
    status: Status
    active_form: str = ""
    """The task as it is being done ("Running the tests"), shown while it is in progress; may be empty."""

    def rewritten(self, change: Callable[[str], str]) -> Todo:
        """The task with `change` applied to its words (known secrets masked)."""
        return replace(self, content=change(self.content), active_form=change(self.active_form))

    def to_dict(self) -> dict:
        """Claude Code's shape (`activeForm`), as the tool takes it and scripts read it."""
        return {"content": self.content, "status": self.status, "activeForm": self.active_form}

    @classmethod
    def from_dict(cls, data: dict) -> Todo:
        status = data.get("status")
        return cls(
            str(data.get("content", "")),
            status if status in STATUSES else "pending",
            str(data.get("activeForm", "")),
        )


def todos_from(entries: object) -> tuple[Todo, ...]:
    """A stored list (a session file's `todos` entry) back as todos; anything that is not one is skipped."""
    if not isinstance(entries, list):
        return ()
    return tuple(Todo.from_dict(entry) for entry in entries if isinstance(entry, dict))
