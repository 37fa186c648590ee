"""`/skills`: the skills found (name, where from, description), those withheld until trusted and why, those hidden
by one of the same name, and what could not be read. Everything a file says is shown through the terminal
sanitiser (ui/terminal_text.py)."""

from __future__ import annotations

from rich.markup import escape as escape_markup

from mini_agent.skills.catalog import find_skills
from mini_agent.ui.terminal_text import visible


def skills_command(repl, argument: str) -> None:
    settings = repl.settings
    catalog = find_skills(settings.cwd, settings.user_dir, settings.data_dir, repl.agent.gate.started)
    if not (catalog.skills or catalog.withheld or catalog.problems):
        repl.console.print(
            "[dim]No skills. A skill is a folder with a SKILL.md in .mini-agent/skills/ or .claude/skills/ (or "
            "skills/ of your mini-agent directory, ~/.claude/skills/): see docs/subagents-and-commands.md#skills.[/]"
        )
        return
    for line in skill_lines(catalog):
        style = "yellow" if line.startswith("! ") else ""
        text = escape_markup(visible(line))
        repl.console.print(f"[{style}]{text}[/]" if style else text, highlight=False, soft_wrap=True)


def skill_lines(catalog) -> list[str]:
    """One line per skill (name, scope, folder, description), then what is withheld, hidden or broken."""
    lines = []
    for skill in catalog.skills.values():
        reserved = "" if skill.offered else " [yours only: disable-model-invocation]"
        lines.append(f"{skill.name}  ({skill.scope}, {skill.folder}){reserved}  {skill.description}")
    for name, (skill, why) in catalog.withheld.items():
        lines.append(f"! {name} ({skill.folder}): not offered, {why}; you are asked at mini-agent's next start")
    for skill, winner in catalog.hidden:
        lines.append(f"! {skill.name} ({skill.folder}): not used, {winner.folder} has the same name and wins")
    lines += [f"! {problem}" for problem in catalog.problems]
    return lines
