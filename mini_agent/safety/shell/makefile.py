"""The shell lines `make TARGET` would run: the recipes of the target and of its prerequisites, from a Makefile.

A small reading of make's syntax, enough to see what a Makefile written in this session does: rules
(`target: prerequisites`, recipe lines starting with a tab, `target: ; command`), variables (`=`, `:=`, `?=`,
`+=`, expanded when used), the automatic variables `$@ $< $^`, and recipe prefixes `@ - +`. What it cannot
expand (`$(shell ...)`, functions) stays as `$(...)`, which the shell rules then treat as computed at run time.
"""

from __future__ import annotations

import re

BUILTINS = {"RM": "rm -f", "MAKE": "make", "CC": "cc", "CXX": "g++", "SHELL": "/bin/sh", "CURDIR": "."}
RULE = re.compile(r"^([^\t:=#][^:=#]*?)\s*(::?)\s*([^=].*)?$")
ASSIGNMENT = re.compile(r"^(?:export\s+|override\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*([:?+!]?=|::=)\s*(.*)$")
REFERENCE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)|\$\{([A-Za-z_][A-Za-z0-9_.-]*)\}|\$([@<^?*])")
TARGETS_LIMIT = 64
EXPANSION_LIMIT = 8


def recipes(text: str, goals: list[str]) -> list[str]:
    """The recipe lines run for `goals` (the default goal when empty), prerequisites first, each once."""
    variables, rules, default = _read(text)
    lines: list[str] = []
    done: set[str] = set()
    pending = list(goals or ([default] if default else []))
    order: list[str] = []
    while pending and len(done) < TARGETS_LIMIT:  # a depth-first walk would recurse; order does not matter here
        target = pending.pop()
        if target in done:
            continue
        done.add(target)
        order.append(target)
        prerequisites, _ = rules.get(target, ([], []))
        pending += prerequisites
    for target in order:
        prerequisites, recipe = rules.get(target, ([], []))
        automatic = {"@": target, "<": prerequisites[0] if prerequisites else "", "^": " ".join(prerequisites)}
        lines += [_expand(line, variables, automatic) for line in recipe]
    return lines


def _read(text: str) -> tuple[dict[str, str], dict[str, tuple[list[str], list[str]]], str | None]:
    variables: dict[str, str] = dict(BUILTINS)
    rules: dict[str, tuple[list[str], list[str]]] = {}
    default: str | None = None
    current: list[str] = []
    """The targets the recipe lines that follow belong to."""
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            for target in current:
                rules[target][1].append(line[1:].lstrip().lstrip("@-+").strip())
            continue
        stripped = line.split("#", 1)[0].rstrip()
        if not stripped.strip():
            continue
        current = []
        assignment = ASSIGNMENT.match(stripped)
        if assignment:
            name, operator, value = assignment.groups()
            if operator == "+=":
                value = (variables.get(name, "") + " " + value).strip()
            if operator != "?=" or name not in variables:
                variables[name] = value
            continue
        rule = RULE.match(stripped)
        if rule is None:
            continue
        prerequisites_text, _, inline = (rule[3] or "").partition(";")
        prerequisites = _expand(prerequisites_text, variables, {}).split()
        current = _expand(rule[1], variables, {}).split()
        for target in current:
            rules.setdefault(target, ([], []))[0].extend(prerequisites)
            if inline.strip():
                rules[target][1].append(inline.strip().lstrip("@-+"))
            if default is None and not target.startswith(".") and "%" not in target:
                default = target
    return variables, rules, default


def _expand(line: str, variables: dict[str, str], automatic: dict[str, str]) -> str:
    for _ in range(EXPANSION_LIMIT):
        expanded = REFERENCE.sub(lambda m: _value(m, variables, automatic), line)
        if expanded == line:
            break
        line = expanded
    return line.replace("$$", "$")


def _value(match: re.Match[str], variables: dict[str, str], automatic: dict[str, str]) -> str:
    name = match[1] or match[2]
    if name is not None:
        return variables.get(name, match[0])
    return automatic.get(match[3], match[0])
