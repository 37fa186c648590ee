"""The `skill` tool: its description offers the skills (names and descriptions only), a call hands the model one
skill's instructions, its folder and a listing of its other files. Progressive disclosure: the body costs
tokens only when used, and the files beside it only when the model reads them (read_file) or runs them (bash),
each call through the permission policy and the sandbox as any other; loading a skill grants nothing.

The list is in the tool's description, as Claude Code's Skill tool has it and as the `task` tool lists the named
agents: it is made once, when the agent is built, so the tools (the first part of the cached prompt) never change
during a session and the cache holds. A skill added during the session is not offered: the agent wrote it, or
someone did while it ran, and what is written there waits for the human's trust (catalog.py) anyway.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from mini_agent.context.skill_trust import SKILL_FILE
from mini_agent.skills.catalog import Catalog
from mini_agent.skills.files import Skill, skill_body
from mini_agent.tools.base import Tool, ToolContext, ToolError, ToolRegistry, tool
from mini_agent.xmltext import escape, quoteattr

LISTED_BYTES = 12 * 1024
"""The skills' lines in the description at most; the others are counted (the model can still load them by name)."""
BODY_BYTES = 48 * 1024
"""Of a body handed to the model; the rest is named with read_file's offset."""
FILES_LISTED = 100

GUIDANCE = """Skills are instructions, and often scripts and reference files, that the user or the project wrote
for a kind of task; the skill tool's description lists them with what each is for. When a task matches one, load
it with the skill tool before starting, then follow it: read the files it points to with read_file and run its
scripts with bash, by their paths in the skill's folder. A skill grants no permission: its commands are asked
about like any other."""


def skill_tool(find: Callable[[], Catalog], offered: list[Skill]) -> Tool:
    """The tool, with `offered` listed in its description; `find` reads the skills as they are at the call."""

    def skill(ctx: ToolContext, name: str) -> str:
        """Load a skill: its instructions, its folder and the files in it.

        Args:
            name: The skill's name, as listed.
        """
        catalog = find()
        found = catalog.named(name)
        if found is None or not found.offered:
            raise ToolError(_unknown(name, catalog))
        body, problem = skill_body(found)
        if body is None:
            raise ToolError(f"The skill {name!r} cannot be loaded: {found.file} {problem}.")
        return loaded(found, body)

    built = tool(risk="read", guidance=GUIDANCE, alias="Skill", key_argument="name")(skill)
    return replace(built, description=built.description + "\n\n" + listing(offered))


def listing(offered: list[Skill]) -> str:
    """The description's list: `<available_skills>` with one escaped line per skill, within LISTED_BYTES."""
    lines, used = [], 0
    for skill in offered:
        line = f"- {skill.name}: {escape(skill.description)}"
        if used + len(line.encode()) > LISTED_BYTES:
            lines.append(f"({len(offered) - len(lines)} more skills not listed; the user's /skills lists them.)")
            break
        lines.append(line)
        used += len(line.encode()) + 1
    return "<available_skills>\n" + "\n".join(lines) + "\n</available_skills>"


def loaded(skill: Skill, body: str) -> str:
    """What a call returns: the body (escaped, capped) in a <skill> tag, then the folder's other files."""
    shown = body
    raw = body.encode()
    if len(raw) > BODY_BYTES:
        cut = raw[:BODY_BYTES]
        shown = cut[: cut.rfind(b"\n") + 1].decode("utf-8", errors="ignore")
        line = _body_start(skill, body) + shown.count("\n")
        shown += f"[{len(raw) - len(shown.encode()):,} more bytes not shown; read_file {skill.file} offset={line}]"
    head = f"<skill name={quoteattr(skill.name)} folder={quoteattr(str(skill.folder))}>"
    files = _files(skill.folder)
    where = (
        f"Files in the skill's folder {escape(str(skill.folder))} (paths relative to it; read them with read_file, "
        "run scripts with bash, only as the skill says they are needed):"
    )
    tail = [where, *(f"- {escape(item)}" for item in files)] if files else ["(No other files in the skill's folder.)"]
    return "\n".join([head, escape(shown), "</skill>", "", *tail])


def _unknown(name: str, catalog: Catalog) -> str:
    held = catalog.withheld.get(name)
    if held is not None:
        return (
            f"The skill {name!r} is not loaded: its folder was {held[1]}. Skills written during a session wait for "
            "the user's trust (asked at mini-agent's next start); do not read its files to follow them instead."
        )
    if name in catalog.skills:
        return f"The skill {name!r} is the user's to use (disable-model-invocation), not the model's."
    names = ", ".join(skill.name for skill in catalog.offered()) or "none"
    return f"No skill named {name!r}. The skills are: {names}."


def _files(folder: Path) -> list[str]:
    """The folder's files but SKILL.md, relative, with sizes (a link says where it points), at most FILES_LISTED."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            relative = path.relative_to(folder)
            if str(relative) == SKILL_FILE or name.startswith("."):
                continue
            if len(found) == FILES_LISTED:
                return [*found, "(more files not listed)"]
            found.append(_entry(path, str(relative)))
    return found


def _entry(path: Path, relative: str) -> str:
    if path.is_symlink():
        return f"{relative} -> {os.readlink(path)}"
    try:
        size = path.stat().st_size
    except OSError:
        return relative
    return f"{relative} ({size:,} bytes)"


def _body_start(skill: Skill, body: str) -> int:
    """The line of SKILL.md where the body begins (after the front matter), for read_file's offset."""
    try:
        text = skill.file.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    except OSError:
        return 1
    return text[: max(text.find(body[:200]), 0)].count("\n") + 1


def with_skills(registry: ToolRegistry, settings, started: float) -> tuple[ToolRegistry, Catalog]:
    """The registry with the `skill` tool added when there is a skill to offer, and the skills as found."""
    from functools import partial

    from mini_agent.skills.catalog import find_skills

    find = partial(find_skills, settings.cwd, settings.user_dir, settings.data_dir, started)
    catalog = find()
    offered = catalog.offered()
    if not offered:
        return registry, catalog
    return ToolRegistry([*registry, skill_tool(find, offered)]), catalog
