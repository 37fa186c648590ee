"""`/memory`: the user memory file's notes, and `/memory add NOTE` (also what "remember ..." does)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from mini_agent.context.memory import add_note, memory_path, notes

if TYPE_CHECKING:
    from rich.console import Console

    from mini_agent.agent import Agent


def memory_command(agent: Agent, console: Console, argument: str) -> None:
    verb, _, note = argument.partition(" ")
    user_dir = agent.settings.user_dir
    if verb == "add" and note.strip():
        path = add_note(user_dir, note)
        agent.keeper.engine.gatherer.forget_source("user_memory")  # the next turn sends the new note
        console.print(f"[dim]Saved to {escape(str(path))}:[/] {escape(' '.join(note.split()))}")
        return
    if argument:
        console.print("[yellow]Use /memory to show the notes, or /memory add NOTE to add one.[/]")
        return
    lines = notes(user_dir)
    console.print(f"[dim]{escape(str(memory_path(user_dir)))}: {len(lines)} line(s)[/]")
    for line in lines:
        console.print(escape(line), highlight=False)
