"""Skills as slash commands the user types, as in Claude Code: `/pdf-forms fill a.pdf` sends the skill (its body,
escaped in a `<skill>` tag with `$ARGUMENTS`, `$1`... put in, then its folder's files) as the prompt. A command
file of the same name wins, and a built-in wins over both. A skill withheld until trusted, or one whose front
matter says `user-invocable: false`, is no command; its `allowed-tools` grant nothing here either."""

from __future__ import annotations

import os
import time
from pathlib import Path

from mini_agent.commands.files import CommandFile
from mini_agent.context.instruction_trust import RECORD
from mini_agent.context.skill_trust import SKILL_FILE, skill_folders, skill_roots
from mini_agent.settings import Settings


class SkillCommands:
    """The skills by `/name`, read again only when a SKILL.md (or the trust record) changes: Tab asks often."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.started = time.time()
        """When the session began, as the gate counts it (a warm server's process is older than the session)."""
        self._stamp: tuple | None = None
        self._commands: dict[str, CommandFile] = {}

    def __call__(self) -> dict[str, CommandFile]:
        settings = self.settings
        roots = [root for _scope, root in skill_roots(Path(settings.cwd), settings.user_dir)]
        stamp = tuple(_stamp(path) for path in [settings.data_dir / RECORD, *map(_skill_file, skill_folders(roots))])
        if stamp != self._stamp:
            self._commands, self._stamp = self._read(), stamp
        return self._commands

    def _read(self) -> dict[str, CommandFile]:
        from mini_agent.skills.catalog import find_skills
        from mini_agent.skills.files import skill_body
        from mini_agent.skills.tool import loaded

        settings = self.settings
        catalog = find_skills(settings.cwd, settings.user_dir, settings.data_dir, self.started)
        commands = {}
        for skill in catalog.skills.values():
            body = skill_body(skill)[0] if skill.typed else None
            if body is not None:
                name = f"/{skill.name}"
                text = f"Use the skill {skill.name} for this.\n\n{loaded(skill, body)}"
                commands[name] = CommandFile(name, skill.file, skill.scope, text, f"{skill.description} (skill)")
        return commands


def _skill_file(folder: Path) -> Path:
    return folder / SKILL_FILE


def _stamp(path: Path) -> tuple:
    try:
        info = os.stat(path)
    except OSError:
        return (str(path),)
    return (str(path), info.st_mtime_ns, info.st_size, info.st_ctime_ns)
