"""One skill folder: its SKILL.md's front matter (read as command files read theirs, commands/files.py) and body.

    ---
    name: pdf-forms
    description: Fill in PDF forms. Use when the user asks to fill, flatten or inspect a PDF form.
    allowed-tools: Bash(python3 scripts/*) Read
    ---
    To fill a form, run scripts/fill.py ...

The Agent Skills format: `name` (lowercase letters, digits and single hyphens, at most 64 characters, the
folder's name) and `description` (at most 1,024 characters) are what the model is offered; `license`,
`compatibility`, `metadata` and Claude Code's own keys are accepted. `allowed-tools` is read and ignored: a skill
never lets anything run without the question it would otherwise get (what the skill tells the model to run goes
through the permission policy and the sandbox like any call). `disable-model-invocation: true` keeps a skill out
of the model's list, `user-invocable: false` out of the user's `/name` commands (app/skill_commands.py). A
problem is one line naming the file; a skill that cannot be used at all is left out, and the others still load.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from mini_agent.commands.files import split_front_matter
from mini_agent.context.skill_trust import SKILL_FILE

MAX_BYTES = 256 * 1024
"""Of a SKILL.md read at all; the body the model is handed is capped again (tool.py)."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
CLAUDE_KEYS = (
    "argument-hint", "disable-model-invocation", "user-invocable", "model", "effort", "context", "agent", "hooks",
    "when_to_use", "version", "paths", "shell",
)  # fmt: skip
"""Claude Code's other keys: accepted without a word, and unused (a skill runs in the conversation here)."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    scope: str
    """"project" or "user": where the folder was found."""
    offered: bool = True
    """Listed to the model (False: `disable-model-invocation: true`)."""
    typed: bool = True
    """A `/name` command the user may type (False: `user-invocable: false`)."""
    allowed_tools: str = ""
    """As written; never obeyed (see the module's docstring)."""
    problems: tuple[str, ...] = ()

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


def read_skill(folder: Path, scope: str) -> tuple[Skill | None, list[str]]:
    """The skill a folder holds, or None and why (each line naming the file)."""
    path = folder / SKILL_FILE
    text, problem = _text(path)
    if text is None:
        return None, [f"{path}: {problem}; the skill is not loaded."]  # "it is over ...", "is a symbolic link"
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    fields, body, problems = split_front_matter(text)
    problems = [f"{path}: {line}" for line in problems]
    fenced = text.split("\n", 1)[0].strip() == "---"
    if fenced and body == text:  # no closing fence: where the body starts is anyone's guess
        return None, [f"{path}: front matter starts with --- but has no closing --- line; the skill is not loaded."]
    if not fenced:
        problems.append(f"{path}: no front matter (--- lines with name and description); named after its folder.")
    lowered = {key.lower(): value for key, value in fields.items()}
    unknown = sorted(set(lowered) - set(SPEC_KEYS) - set(CLAUDE_KEYS))
    if unknown:
        problems.append(f"{path}: unknown front matter key(s) {', '.join(unknown)} (ignored).")
    name, name_problem = _name(lowered.get("name"), folder.name)
    if name_problem:
        problems.append(f"{path}: {name_problem}")
    if name is None:
        return None, [*problems, f"{path}: the skill is not loaded."]
    description = " ".join(_words(lowered.get("description")).split())
    if not description:
        description = _first_line(body) or "(no description)"
        problems.append(f"{path}: no description; the model is offered its first line instead.")
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
        problems.append(f"{path}: the description is over {MAX_DESCRIPTION} characters; cut.")
    hidden = _words(lowered.get("disable-model-invocation")).lower() == "true"
    typed = _words(lowered.get("user-invocable")).lower() != "false"
    tools = _words(lowered.get("allowed-tools"))
    skill = Skill(name, description, folder, scope, not hidden, typed, tools, tuple(problems))
    return skill, list(problems)


def skill_body(skill: Skill) -> tuple[str | None, str]:
    """SKILL.md's text after the front matter as it is now, or None and why."""
    text, problem = _text(skill.file)
    if text is None:
        return None, problem
    _fields, body, _problems = split_front_matter(text.lstrip("\ufeff").replace("\r\n", "\n"))
    return body.strip("\n"), ""


def _text(path: Path) -> tuple[str | None, str]:
    """The file's text: never through a symlink (a SKILL.md linked to ~/.aws/credentials would hand the model what
    read_file asks about), never waiting on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        why = "is a symbolic link" if exc.errno == errno.ELOOP else f"cannot be read ({exc.strerror or exc})"
        return None, why
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "is not a regular file"
        raw = b""
        while len(raw) <= MAX_BYTES and (chunk := os.read(fd, MAX_BYTES + 1 - len(raw))):
            raw += chunk
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    finally:
        os.close(fd)
    if len(raw) > MAX_BYTES:
        return None, f"is over {MAX_BYTES // 1024} KiB"
    try:
        return raw.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        return None, f"is not UTF-8 text (byte {exc.start})"


def _name(value: str | list[str] | None, folder: str) -> tuple[str | None, str]:
    """The skill's name and what is wrong with it: the front matter's when valid, else the folder's."""
    written = _words(value)
    if written and _valid(written):
        if written != folder:
            return written, f"name {written!r} differs from its folder {folder!r}; the name is used."
        return written, ""
    if _valid(folder):
        why = f"name {written!r} is not lowercase letters, digits and hyphens (at most {MAX_NAME})" if written else ""
        return folder, f"{why}; the folder's name {folder!r} is used." if why else ""
    return None, f"neither the name {written!r} nor the folder's is lowercase letters, digits and hyphens"


def _valid(name: str) -> bool:
    return len(name) <= MAX_NAME and NAME.fullmatch(name) is not None


def _words(value: str | list[str] | None) -> str:
    if isinstance(value, list):
        return " ".join(value)
    return (value or "").strip()


def _first_line(body: str) -> str:
    line = next((line.strip() for line in body.split("\n") if line.strip()), "")
    return line.lstrip("#").strip()[:200]
