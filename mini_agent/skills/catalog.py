"""Where skills are found, which one a name means, and which are withheld until the human trusts them.

Highest precedence first (the first folder to claim a name wins; the others are named as hidden by it), the
directories custom commands use (safety/agent_files.py `definition_dirs`):

    <project>/.mini-agent/skills/<name>/SKILL.md   from the working directory up to the repository root
    <project>/.claude/skills/<name>/SKILL.md       (the same walk; Claude Code's layout)
    <user dir>/skills/<name>/SKILL.md              (MINI_AGENT_HOME or ~/.config/mini-agent)
    ~/.claude/skills/<name>/SKILL.md

A skill folder changed during this session, or during an earlier one and not trusted since
(context/skill_trust.py), is withheld: not offered, not loaded, listed by /skills with why. One changed during this
session is remembered when seen here too (as after each tool call), so the next sessions withhold it as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from mini_agent.context.instruction_trust import remember, written
from mini_agent.context.skill_trust import CHANGED_NOW, distrust, folder_digest, skill_folders, skill_roots
from mini_agent.errors import MiniAgentError
from mini_agent.skills.files import Skill, read_skill


@dataclass(frozen=True)
class Catalog:
    skills: dict[str, Skill] = field(default_factory=dict)
    """The usable skills by name, in precedence order."""
    withheld: dict[str, tuple[Skill, str]] = field(default_factory=dict)
    """Skills not offered until the human trusts them, each with why."""
    hidden: tuple[tuple[Skill, Skill], ...] = ()
    """(a skill, the one of the same name that wins over it)."""
    problems: tuple[str, ...] = ()
    """One line per folder that could not be read as it should."""

    def offered(self) -> list[Skill]:
        """What the model is told of: usable skills their authors did not reserve for the user."""
        return [skill for skill in self.skills.values() if skill.offered]

    def named(self, name: str) -> Skill | None:
        return self.skills.get(name)


def find_skills(cwd: Path, user_dir: Path, data_dir: Path | None, started: float, home: Path | None = None) -> Catalog:
    """Every skill as it is now. `started`: when the session began (a folder changed since is withheld)."""
    record = written(data_dir)
    chosen: dict[str, Skill] = {}
    withheld: dict[str, tuple[Skill, str]] = {}
    hidden: list[tuple[Skill, Skill]] = []
    problems: list[str] = []
    seen: set[Path] = set()
    for scope, root in skill_roots(cwd, user_dir, home):
        for folder in skill_folders([root]):
            real = folder.resolve()
            if real in seen:  # the same folder reached twice (a link, a walk that passes it twice)
                continue
            seen.add(real)
            if scope == "project" and not real.is_relative_to(root.parent.parent.resolve()):
                problems.append(f"{folder}: links outside the project ({real}); the skill is not loaded.")
                continue
            skill, lines = read_skill(folder, scope)
            problems += lines
            if skill is None:
                continue
            winner = chosen.get(skill.name) or withheld.get(skill.name, (None, ""))[0]
            if winner is not None:
                hidden.append((skill, winner))
                continue
            why = distrust(folder, started, record)
            if why == CHANGED_NOW and data_dir is not None:
                _remember(data_dir, folder, record)
            if why is not None:
                withheld[skill.name] = (skill, why)
            else:
                chosen[skill.name] = skill
    return Catalog(chosen, withheld, tuple(hidden), tuple(problems))


def _remember(data_dir: Path, folder: Path, record: dict[str, str]) -> None:
    """A folder changed in this session, seen when the skills are read: withheld in the next sessions too."""
    real, value = folder.resolve(), folder_digest(folder)
    if record.get(str(real)) != value:
        try:
            remember(data_dir, [(real, value)])
        except (OSError, MiniAgentError):
            pass  # this session withholds it anyway; a data dir that cannot be written must not hide the skills
