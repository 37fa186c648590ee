"""`/todos`: the agent's todo list as its last todo_write left it (a resumed session's too)."""

from __future__ import annotations


def todos_command(repl, argument: str) -> None:
    from mini_agent.ui.todo_view import summary

    todos = repl.agent.session.todos
    if todos:
        repl.console.print(f"todos · {summary(todos)}", highlight=False)
    repl.renderer.print_todos(todos)
