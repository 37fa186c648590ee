"""todo_write: the model keeps a visible list of the steps of its task, replacing the whole list each call. It
changes no file and asks nobody; the session keeps the list (its file too) and the front ends show it."""

from __future__ import annotations

from typing import (
    Annotated,
    Literal,
    NotRequired,  # pydantic reads TypedDicts from here before 3.12
)

from pydantic import ConfigDict, Field
from typing_extensions import TypedDict

from mini_agent.safety.rules import TODO_WRITE
from mini_agent.tools._arguments import unpaired_surrogate
from mini_agent.tools.base import ToolContext, ToolError, ToolResult, tool
from mini_agent.tools.todo_list import Todo

MAX_TODOS = 100
"""More than this is no list a human reads at a glance."""
MAX_CHARS = 500
"""One task, one line or two: longer text belongs in the reply."""


class TodoItem(TypedDict):
    """One task as the model sends it (Claude Code's shape): validated as a plain dict, which is what events, hooks
    and the session file carry."""

    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]
    content: Annotated[str, Field(description="The task in the imperative, e.g. 'Run the tests'.")]
    status: Literal["pending", "in_progress", "completed"]
    activeForm: NotRequired[Annotated[str, Field(description="The task being done, e.g. 'Running the tests'.")]]


GUIDANCE = """For a task of three or more steps: write the steps as a todo list first, mark one in_progress when you
start it and completed as soon as it is done, and add steps you discover. Each call replaces the whole list.
Keep one step in_progress at a time. Skip it for a single, simple step."""


@tool(risk="read", guidance=GUIDANCE, alias="TodoWrite", alone=True)
def todo_write(ctx: ToolContext, todos: list[TodoItem]) -> ToolResult:
    """Replace the session's todo list (the user sees it) with this one.

    Args:
        todos: The whole list, in order: every task with its status (pending, in_progress or completed).
    """
    if len(todos) > MAX_TODOS:
        raise ToolError(f"Invalid arguments for {TODO_WRITE}: at most {MAX_TODOS} todos, not {len(todos)}.")
    items = []
    for index, item in enumerate(todos):
        content, active = item["content"], item.get("activeForm", "")
        for name, text in (("content", content), ("activeForm", active)):
            too_long = f"is longer than {MAX_CHARS} characters" if len(text) > MAX_CHARS else None
            problem = unpaired_surrogate(text) or too_long
            if problem:
                raise ToolError(f"Invalid arguments for {TODO_WRITE}: 'todos.{index}.{name}' {problem}.")
        if not content.strip():
            raise ToolError(f"Invalid arguments for {TODO_WRITE}: 'todos.{index}.content' is empty.")
        items.append(Todo(" ".join(content.split()), item["status"], " ".join(active.split())))
    done = sum(todo.status == "completed" for todo in items)
    text = f"The todo list now has {len(items)} tasks, {done} completed." if items else "The todo list is empty."
    busy = sum(todo.status == "in_progress" for todo in items)
    if busy > 1:  # Claude Code's advice, not a rule: the list is kept as sent
        text += f" {busy} tasks are in_progress: keep one at a time, and mark each completed as soon as it is done."
    return ToolResult(f"{text} Keep it current as you work.", todos=tuple(items))
