"""Noticing what a tool call planted for later: the project's mini-agent configuration and definitions
(agent_files.py: `.mini-agent/`, `.mcp.json`, `.claude/`) and the running installation (installation.py), looked at
before and after each call that may change files, whether it ran in the sandbox or outside it.

Noticing is for the human: what grants permissions in a project's files is obeyed only once trusted (trust.py),
so a change there waits for a yes at the next start anyway; a change to the installation runs at the next start,
so the human must hear of it now. The sandbox's own watch (sandbox/watch.py) tells the model; this tells the
terminal."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from mini_agent.safety.agent_files import AGENT_FILES
from mini_agent.safety.installation import inside_installation, startup_state, watched
from mini_agent.safety.sandbox.watch import Fingerprint, look
from mini_agent.safety.workspace import project_dirs

PROJECT_PLACES = AGENT_FILES
"""Where a project's file may grant something, with how many directory levels a change is looked for."""


class PlantedWatch:
    """The protected places of one session, seen from its working directory."""

    def __init__(self, root: Path) -> None:
        self.places = [(directory / name, depth) for directory in project_dirs(root) for name, depth in PROJECT_PLACES]
        self.installed = watched()

    def look(self, files: Iterable[Path] = ()) -> dict[Path, Fingerprint]:
        """`files`: more files to watch this time (the instruction files and what they import, which change)."""
        seen = {path: look(path, depth) for path, depth in self.places}
        seen.update((directory, startup_state(directory)) for directory in self.installed)
        seen.update((path, look(path, 0)) for path in files)
        return seen

    def changed(self, before: dict[Path, Fingerprint]) -> list[Path]:
        """What differs from `before`, looking at the same places (and files) it holds."""
        extra = [path for path in before if not any(path == place for place, _ in self.places)]
        now = self.look(path for path in extra if path not in self.installed)
        return [path for path, seen in now.items() if before.get(path) != seen]

    def notices(self, before: dict[Path, Fingerprint]) -> list[str]:
        return notices(self.changed(before))


def notices(changed: list[Path]) -> list[str]:
    """What the human is told about the places a call changed: one line for the project's files, one for the
    installation."""
    installed = [path for path in changed if inside_installation(path)]
    project = [path for path in changed if path not in installed]
    lines = []
    if project:
        lines.append(
            f"Changed during that call: {', '.join(map(str, project))}. What these files allow is not obeyed until "
            "you trust it; mini-agent asks at its next start."
        )
    if installed:
        lines.append(
            f"Changed during that call: mini-agent's own installation ({', '.join(map(str, installed))}). Python "
            "runs code from there when mini-agent next starts: check it before you run mini-agent again."
        )
    return lines
