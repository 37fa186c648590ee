"""The todo list as a few lines: `☑` done, `◐` in progress (its active form when it has one), `☐` pending; ASCII
`[x]`, `[~]`, `[ ]` where the terminal cannot show those. Shown under each todo_write call, by `/todos` and in
`-p` progress. The model wrote every word of it: the caller passes each line through `visible` (or a console
that does)."""

from __future__ import annotations

from mini_agent.tools.todo_list import Todo

MARKS = {"completed": "☑", "in_progress": "◐", "pending": "☐"}
ASCII_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
STYLES = {"completed": "dim", "in_progress": "bold", "pending": ""}
"""How the REPL paints each line (rich styles)."""


def todo_lines(todos: tuple[Todo, ...], unicode: bool = True) -> list[tuple[str, str]]:
    """One (text, style) per task, in order; a line saying the list is empty when it is."""
    if not todos:
        return [("(the todo list is empty)", "dim")]
    marks = MARKS if unicode else ASCII_MARKS
    lines = []
    for todo in todos:
        words = todo.active_form if todo.status == "in_progress" and todo.active_form else todo.content
        lines.append((f"{marks[todo.status]} {words}", STYLES[todo.status]))
    return lines


def summary(todos: tuple[Todo, ...]) -> str:
    """`2/5 done` for a heading."""
    done = sum(todo.status == "completed" for todo in todos)
    return f"{done}/{len(todos)} done"
