"""Named sub-agents: `.mini-agent/agents/*.md` files (and Claude Code's `.claude/agents/*.md`), front matter
(description, tools, model, skills) and a body that is added to the sub-agent's system prompt. The project's
directories win over the user's on a name clash, and mini-agent's own over Claude Code's.

Claude Code's agent files load as written: its other front matter keys (color, permissionMode, hooks, ...) are
accepted and left unused, `disallowedTools` takes tools away, `skills` preloads those skills' instructions, and
its model names (`sonnet`, `opus`, `haiku`, `inherit`) are resolved where the agent runs (delegation.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mini_agent.commands.files import split_front_matter

AGENTS_DIR = Path(".mini-agent") / "agents"
CLAUDE_AGENTS_DIR = Path(".claude") / "agents"
FIELDS = ("name", "description", "tools", "model", "disallowedtools", "skills")
CLAUDE_FIELDS = (
    "color", "permissionmode", "hooks", "mcpservers", "memory", "effort", "maxturns", "background",
    "isolation", "initialprompt",
)  # fmt: skip
"""Claude Code's other agent keys: accepted, not used here (a sub-agent's mode and hooks are always its
parent's)."""


def agent_dirs(cwd: Path, user_dir: Path, home: Path) -> tuple[Path, ...]:
    """Where agent files are read, the first winning a name."""
    return (cwd / AGENTS_DIR, cwd / CLAUDE_AGENTS_DIR, user_dir / "agents", home / CLAUDE_AGENTS_DIR)


@dataclass(frozen=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str
    """The body of the file: added to the sub-agent's system prompt."""
    tools: tuple[str, ...] | None = None
    """The tools it may use (never `task`); None: every tool the main agent has."""
    withheld: tuple[str, ...] = ()
    """Tools it may not use even so (Claude Code's `disallowedTools`)."""
    model: str | None = None
    """A model id for this agent; None: the main agent's model."""
    path: Path | None = None
    skills: tuple[str, ...] = ()
    """Skills whose instructions are put in its system prompt from the start (Claude Code's `skills`)."""


class DefinitionError(ValueError):
    """A definition file that cannot be used: the message says which file and why."""


def parse_front_matter(text: str) -> tuple[dict[str, str | list[str]], str]:
    """`---`-fenced `key: value` lines, read as command files read them (a value may be `[a, b]`, `a, b`, or `- a`
    lines below the key), and the body after the closing fence. Text without front matter is all body."""
    fields, body, problems = split_front_matter(text.lstrip("\ufeff"))
    if problems:
        raise DefinitionError(problems[0].rstrip("."))
    read: dict[str, str | list[str]] = {}
    for key, value in fields.items():
        if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
            value = [item.strip().strip("'\"") for item in value[1:-1].split(",") if item.strip()]
        read[key.lower()] = [] if value == "" else value
    return read, body.strip()


def _names(value: str | list[str] | None) -> list[str] | None:
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def definition_of(path: Path, text: str) -> AgentDefinition:
    fields, body = parse_front_matter(text)
    unknown = sorted(set(fields) - set(FIELDS) - set(CLAUDE_FIELDS))
    if unknown:
        raise DefinitionError(f"unknown front matter keys: {', '.join(unknown)} (known: {', '.join(FIELDS)})")
    description = fields.get("description")
    if not isinstance(description, str) or not description:
        raise DefinitionError("the front matter needs a 'description': the model picks agents by it")
    tools = _names(fields.get("tools"))
    withheld = _names(fields.get("disallowedtools")) or []
    model = fields.get("model")
    name = fields.get("name") or path.stem
    if not isinstance(name, str) or not name.replace("-", "").replace("_", "").isalnum():
        raise DefinitionError(f"the agent name {name!r} must be letters, digits, '-' or '_'")
    return AgentDefinition(
        name=name,
        description=" ".join(description.split()),
        prompt=body,
        tools=tuple(tools) if tools is not None else None,
        withheld=tuple(withheld),
        model=model if isinstance(model, str) and model else None,
        path=path,
        skills=tuple(_names(fields.get("skills")) or ()),
    )


def load_definitions(*directories: Path) -> tuple[dict[str, AgentDefinition], list[str]]:
    """Every definition in `directories`, the earlier directory winning a name, and a problem line per file
    that could not be used (it is left out, the others still load)."""
    found: dict[str, AgentDefinition] = {}
    problems: list[str] = []
    for directory in directories:
        for path in sorted(directory.glob("*.md")) if directory.is_dir() else ():
            try:
                definition = definition_of(path, path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, DefinitionError) as exc:
                problems.append(f"{path}: {exc}")
                continue
            found.setdefault(definition.name, definition)
    return found, problems
