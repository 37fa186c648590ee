"""One custom command file: its front matter (a small YAML subset, read by hand) and its body.

    ---
    description: Review a pull request
    argument-hint: [pr-number]
    model: claude-haiku-4-5
    allowed-tools: bash(gh pr view *), bash(gh pr diff *), read_file
    ---
    Review pull request #$1 ...

Front matter is `key: value` lines; a value may be quoted, an inline list `[a, b]`, a block of `- item`
lines, or go on over indented lines (`description: >` or `|`, a nested `metadata:` mapping kept as text). No
YAML library is a dependency, and this is all the format needs. A file whose front matter cannot be
read still works with its body; the problem comes back as one line naming the file. `allowed-tools` entries are
permission rules (safety/rules.py), allowing only; Claude Code's spellings (`Bash(git add:*)`, `Read`: a tool's
alias, declared on the tool) are translated. Pure code apart from reading the one file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mini_agent.errors import ConfigError
from mini_agent.safety.rules import Origin, Rule, Rules, parse_rules

KEYS = ("description", "argument-hint", "model", "allowed-tools")
MAX_BYTES = 256 * 1024
_KEY_LINE = re.compile(r"^([A-Za-z][\w-]*)\s*:\s*(.*)$")


@dataclass(frozen=True)
class CommandFile:
    name: str
    """As typed, with its slash: `/review`, `/frontend:build`."""
    path: Path
    scope: str
    """"project" or "user": where the file was found."""
    body: str
    description: str
    argument_hint: str = ""
    model: str | None = None
    rules: Rules = Rules()
    """What `allowed-tools` allows for the turn the command starts."""
    problems: tuple[str, ...] = ()
    """One line each, naming the file: front matter that could not be read (the body still works)."""


def read_command(path: Path, name: str, scope: str) -> CommandFile | None:
    """The command a file defines; None when it cannot be read at all."""
    try:
        raw = path.read_bytes()[:MAX_BYTES]
    except OSError:
        return None
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    fields, body, problems = split_front_matter(text)
    problems = [f"{path}: {problem}" for problem in problems]
    unknown = sorted(set(fields) - set(KEYS))
    if unknown:
        problems.append(f"{path}: unknown front matter key(s) {', '.join(unknown)} (ignored).")
    rules, rule_problems = allowed_rules(fields.get("allowed-tools"), Origin(scope, str(path)))
    problems.extend(f"{path}: {problem}" for problem in rule_problems)
    description = _text(fields.get("description")) or _first_line(body) or "(custom command)"
    return CommandFile(
        name=name,
        path=path,
        scope=scope,
        body=body,
        description=description,
        argument_hint=_text(fields.get("argument-hint")),
        model=_text(fields.get("model")) or None,
        rules=rules,
        problems=tuple(problems),
    )


def split_front_matter(text: str) -> tuple[dict[str, str | list[str]], str, list[str]]:
    """The front matter's fields, the body, and what went wrong (the fields read so far are kept)."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text, []
    end = next((index for index in range(1, len(lines)) if lines[index].strip() == "---"), None)
    if end is None:
        return {}, text, ["front matter starts with --- but has no closing --- line; the whole file is the body."]
    fields: dict[str, str | list[str]] = {}
    problems: list[str] = []
    current: str | None = None
    below: dict[str, list[str]] = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        stripped = line.strip()
        value = fields.get(current) if current is not None else None
        if current is not None and line[0] in " \t" and isinstance(value, str) and _continues(value, stripped):
            below.setdefault(current, []).append(stripped)
            continue
        if stripped.startswith("- ") or stripped == "-":
            if current is None or isinstance(fields.get(current), str) and fields[current]:
                problems.append(f"line {number}: a list item with no key above it (ignored).")
                continue
            items = fields.get(current)
            items = items if isinstance(items, list) else []
            items.append(_unquote(stripped[1:].strip()))
            fields[current] = items
            continue
        match = _KEY_LINE.match(line)
        if not match:
            problems.append(f"line {number}: {stripped!r} is not `key: value` (ignored).")
            current = None
            continue
        current, value = match.group(1), match.group(2).strip()
        fields[current] = _unquote(value)  # `[a, b]` stays text: argument-hint shows it as written
    for key, more in below.items():
        fields[key] = _joined(str(fields[key]), more)
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return fields, body, problems


_BLOCK = re.compile(r"^[|>][+-]?$")
"""YAML's block scalar indicators: `description: >-` then indented lines."""


def _continues(value: str, stripped: str) -> bool:
    """Whether an indented line belongs to the key above: a block scalar's or a plain value's next line, or a
    nested mapping (`metadata:` then `  author: x`); an indented `- item` under an empty key is a list item."""
    return bool(_BLOCK.match(value)) or bool(value) or not (stripped.startswith("- ") or stripped == "-")


def _joined(value: str, more: list[str]) -> str:
    """A key's value with its indented lines: `|` keeps the lines, `>` and a plain value fold them into one (as
    YAML does), and a nested mapping stays as its lines of text (nothing here reads one)."""
    if value.startswith("|") or not value:
        return "\n".join(more)
    if value.startswith(">"):
        return " ".join(more)
    return " ".join([value, *more])


def allowed_rules(value: str | list[str] | None, origin: Origin) -> tuple[Rules, list[str]]:
    """`allowed-tools` as allow rules; an entry that is not a rule is reported and left out (never widened)."""
    if not value:
        return Rules(), []
    if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    entries = value if isinstance(value, list) else split_top_level(value)
    entries = [_unquote(entry.strip()) for entry in entries]
    rules: list[Rule] = []
    problems: list[str] = []
    for entry in entries:
        written = entry.strip()
        if not written:
            continue
        try:
            rules.extend(parse_rules(written, "allow", origin))
        except ConfigError as exc:
            problems.append(f"allowed-tools entry {entry.strip()!r} left out: {exc}")
    return Rules(tuple(rules)), problems


def split_top_level(value: str) -> list[str]:
    """`bash(a, b), read_file` -> the two entries: commas inside parentheses belong to a pattern."""
    entries, depth, start = [], 0, 0
    for index, char in enumerate(value):
        depth += (char == "(") - (char == ")")
        if char == "," and depth <= 0:
            entries.append(value[start:index])
            start = index + 1
    entries.append(value[start:])
    return [entry.strip() for entry in entries if entry.strip()]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _text(value: str | list[str] | None) -> str:
    if isinstance(value, list):
        return " ".join(value)
    return (value or "").strip()


def _first_line(body: str) -> str:
    line = next((line.strip() for line in body.split("\n") if line.strip()), "")
    return line.lstrip("#").strip()[:80]
