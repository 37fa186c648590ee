"""Permission rules: `tool` or `tool(pattern)`, each with an effect (allow, ask, deny) and where it came from.

Patterns by tool:
- bash: a command, `*` matching any characters; a trailing ` *` also matches nothing, so `bash(git log *)`
  matches `git log` and `git log --oneline` but not `git logs`. Each simple command of a compound one is
  matched on its own.
- read_file, write_file, edit_file: a path glob; relative patterns start at the working directory, `~/` at
  home; `*` stays within one directory, `**` crosses directories, a trailing `/` means everything below.
- web_fetch: a host (`docs.python.org`), `*.python.org` for its subdomains, or a URL glob when the pattern
  has `://`.
- job_output, stop_job, exit_plan_mode and todo_write take no pattern.
- MCP tools take no pattern: `mcp__github__create_issue` names one tool, `mcp__github` or `mcp__github__*`
  every tool of a server, and `*`/`?` glob names (safety/mcp_policy.py matches them).

Claude Code's spelling means the same here (`parse_rules`): `Bash(npm run test:*)` is `bash(npm run test *)`,
`Read(./src/**)` is `read_file(./src/**)`, `Edit(...)` covers both tools that edit files, `WebFetch(domain:x)` is
`web_fetch(x)`, and in its path rules `//abs` is an absolute path and `/path` starts at the project. Its tools
with no counterpart here (Grep, Glob, WebSearch, ...) are accepted as rules that match nothing; its ExitPlanMode and
TodoWrite are exit_plan_mode and todo_write.
Pure code: no file reading here (config_files.py loads rules).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Literal

from mini_agent.errors import ConfigError

Effect = Literal["allow", "ask", "deny"]
EFFECTS: tuple[Effect, ...] = ("deny", "ask", "allow")
BASH, READ_FILE, WRITE_FILE, EDIT_FILE, WEB_FETCH = "bash", "read_file", "write_file", "edit_file", "web_fetch"
JOB_OUTPUT, STOP_JOB = "job_output", "stop_job"
EXIT_PLAN_MODE, TODO_WRITE = "exit_plan_mode", "todo_write"
"""The built-in tools' names: the words of the rule language, and the one place they are written (tools/ imports
them; each tool's declaration says everything else about it, and tests/tools/test_facts.py checks they agree)."""
TOOLS = (BASH, READ_FILE, WRITE_FILE, EDIT_FILE, WEB_FETCH, JOB_OUTPUT, STOP_JOB, EXIT_PLAN_MODE, TODO_WRITE)
JOB_TOOLS = (JOB_OUTPUT, STOP_JOB)
"""Tools of bash's background jobs."""
PLAIN_TOOLS = (*JOB_TOOLS, EXIT_PLAN_MODE, TODO_WRITE)
"""Tools whose rules take no pattern: a rule names the tool or nothing."""
FILE_TOOLS = (READ_FILE, WRITE_FILE, EDIT_FILE)
"""Tools whose rules take a path glob."""
EDIT_TOOLS = (WRITE_FILE, EDIT_FILE)
"""Tools that edit files: accept-edits mode runs them, one "always" answer allows both on a path."""
CLAUDE_TOOLS: dict[str, tuple[str, ...]] = {
    "Bash": (BASH,),
    "Read": (READ_FILE,),
    "Write": (WRITE_FILE,),
    "Edit": (EDIT_FILE, WRITE_FILE),
    "MultiEdit": (EDIT_FILE, WRITE_FILE),
    "WebFetch": (WEB_FETCH,),
    "BashOutput": (JOB_OUTPUT,),
    "TaskOutput": (JOB_OUTPUT,),
    "KillShell": (STOP_JOB,),
    "KillBash": (STOP_JOB,),
    "ExitPlanMode": (EXIT_PLAN_MODE,),
    "TodoWrite": (TODO_WRITE,),
}
"""Claude Code's tool names in rules and the tools here each covers (its Edit rules cover every tool that edits
files). Each built-in tool's alias is the first name here that covers it (tests/tools/test_facts.py)."""
CLAUDE_WITHOUT_COUNTERPART = frozenset(
    {"Grep", "Glob", "LS", "WebSearch", "NotebookEdit", "NotebookRead", "Task", "Agent"}
    | {"Skill", "SlashCommand", "Monitor"}
)
"""Claude Code tools a rule may name that have no counterpart here: such a rule is kept and matches nothing
(searches run through bash here, where read-only grep, rg, find and ls run without asking)."""
OriginKind = Literal["user", "project", "flag", "session"]
_RULE = re.compile(r"^\s*([A-Za-z_][\w*?-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


@dataclass(frozen=True)
class Origin:
    """Where a rule came from: the user's file, the project's file, a flag, or an answer in this session."""

    kind: OriginKind
    detail: str = ""
    """The file's path or the flag's name."""

    def __str__(self) -> str:
        names = {"user": "user config", "project": "project config", "flag": "flag", "session": "this session"}
        return f"{names[self.kind]} {self.detail}".strip()

    @property
    def trusted(self) -> bool:
        """Whether this source speaks for the human at the keyboard; a cloned project's file does not."""
        return self.kind != "project"


@dataclass(frozen=True)
class Rule:
    effect: Effect
    tool: str
    pattern: str | None
    origin: Origin = field(default_factory=lambda: Origin("flag"))

    @property
    def text(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"

    @property
    def exact(self) -> bool:
        """A rule naming one thing (no wildcard): only such rules from a trusted source may allow risky calls."""
        if self.pattern is None or "*" in self.pattern:
            return False
        return not (self.tool in FILE_TOOLS and self.pattern.endswith("/"))

    def __str__(self) -> str:
        return f"{self.effect} {self.text} ({self.origin})"

    @cached_property
    def _regex(self) -> re.Pattern[str] | None:
        if self.pattern is None:
            return None
        if self.tool == BASH:
            return _command_regex(self.pattern)
        if self.tool == WEB_FETCH:
            return _host_regex(self.pattern)
        return None

    def matches_command(self, command: str) -> bool:
        return self.tool == BASH and (self._regex is None or bool(self._regex.fullmatch(" ".join(command.split()))))

    def matches_path(self, tool: str, path: Path, root: Path, home: Path) -> bool:
        if self.tool != tool:
            return False
        if self.pattern is None:
            return True
        return bool(_path_regex(self.pattern, root, home).fullmatch(path.as_posix()))

    def matches_url(self, url: str, host: str) -> bool:
        if self.tool != WEB_FETCH:
            return False
        if self._regex is None:
            return True
        target = url if self.pattern and "://" in self.pattern else host.lower().rstrip(".")
        return bool(self._regex.fullmatch(target))


def parse_rules(text: str, effect: Effect, origin: Origin) -> tuple[Rule, ...]:
    """The rules a written rule stands for (two for Claude Code's `Edit(...)`); a clear ConfigError for anything
    that is not a rule."""
    match = _RULE.match(text) if isinstance(text, str) else None
    if not match:
        raise ConfigError(
            f"Permission rule {text!r} ({origin}) is not `tool` or `tool(pattern)`, e.g. 'bash(npm test)'."
        )
    tool, pattern = match.group(1), match.group(2)
    if tool.startswith("mcp__") and pattern is None:
        return (Rule(effect, tool, None, origin),)  # an MCP tool, a server (`mcp__github`) or a glob of them
    if pattern is not None:
        pattern = pattern.strip()
        if not pattern:
            raise ConfigError(f"Permission rule {text!r} ({origin}) has an empty pattern; write just {tool!r}.")
    if tool in CLAUDE_WITHOUT_COUNTERPART:
        return (Rule(effect, tool, pattern, origin),)
    if tool in CLAUDE_TOOLS:
        covered = CLAUDE_TOOLS[tool]
        if pattern is not None and covered[0] in PLAIN_TOOLS:
            raise ConfigError(f"Permission rule {text!r} ({origin}): {tool} takes no pattern; write just {tool!r}.")
        pattern = None if pattern is None else _claude_pattern(covered[0], pattern)
        return tuple(Rule(effect, name, pattern, origin) for name in covered)
    if tool not in TOOLS:
        raise ConfigError(
            f"Permission rule {text!r} ({origin}) names an unknown tool; the tools are {', '.join(TOOLS)} "
            "(or Claude Code's Bash, Read, Write, Edit, WebFetch) and mcp__<server>__<tool>."
        )
    if pattern is not None and tool in PLAIN_TOOLS:
        raise ConfigError(f"Permission rule {text!r} ({origin}): {tool} takes no pattern; write just {tool!r}.")
    return (Rule(effect, tool, pattern, origin),)


def parse_rule(text: str, effect: Effect, origin: Origin) -> Rule:
    """The rule a written rule stands for, where it stands for one (Claude Code's `Edit(...)` stands for two)."""
    rules = parse_rules(text, effect, origin)
    if len(rules) != 1:
        raise ConfigError(f"Permission rule {text!r} ({origin}) stands for {len(rules)} rules here.")
    return rules[0]


def _claude_pattern(tool: str, pattern: str) -> str:
    """A pattern in Claude Code's spelling, in this rule language."""
    if tool == BASH and pattern.endswith(":*"):  # its prefix form: the command, or it followed by anything
        return pattern[:-2].rstrip() + " *"
    if tool == WEB_FETCH and pattern.startswith("domain:"):
        return pattern[len("domain:") :].strip()
    if tool in FILE_TOOLS:
        if pattern.startswith("//"):  # an absolute path
            return "/" + pattern.lstrip("/")
        if pattern.startswith("/"):  # relative to the settings file: the project here
            return "./" + pattern.lstrip("/")
    return pattern


@dataclass(frozen=True)
class Rules:
    """Every rule in force, in the order they were given."""

    rules: tuple[Rule, ...] = ()

    def __add__(self, other: Rules) -> Rules:
        return Rules(self.rules + other.rules)

    def with_rules(self, *rules: Rule) -> Rules:
        return Rules(self.rules + tuple(rule for rule in rules if rule not in self.rules))

    def of(self, effect: Effect, tool: str) -> tuple[Rule, ...]:
        return tuple(rule for rule in self.rules if rule.effect == effect and rule.tool == tool)

    def __len__(self) -> int:
        return len(self.rules)


def _command_regex(pattern: str) -> re.Pattern[str]:
    pattern = " ".join(pattern.split())
    optional_tail = pattern.endswith(" *")
    body = pattern[:-2] if optional_tail else pattern
    regex = ".*".join(re.escape(piece) for piece in body.split("*"))
    if optional_tail:
        regex += r"(?: .*)?"
    return re.compile(regex, re.DOTALL)


def _host_regex(pattern: str) -> re.Pattern[str]:
    if "://" in pattern:
        return re.compile(".*".join(re.escape(piece) for piece in pattern.split("*")), re.DOTALL)
    host = pattern.lower().rstrip(".")
    if host.startswith("*."):
        return re.compile(r"(?:[^/]+\.)?" + re.escape(host[2:]))
    return re.compile("[^/.]*".join(re.escape(piece) for piece in host.split("*")))


@lru_cache(maxsize=256)
def _path_regex(pattern: str, root: Path, home: Path) -> re.Pattern[str]:
    if pattern == "~" or pattern.startswith("~/"):
        pattern = home.as_posix() + pattern[1:]
    elif not pattern.startswith("/"):
        pattern = root.as_posix().rstrip("/") + "/" + pattern.removeprefix("./")
    if pattern.endswith("/"):
        pattern += "**"
    regex, index = "", 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            regex, index = regex + "(?:.*/)?", index + 3
        elif pattern.startswith("**", index):
            regex, index = regex + ".*", index + 2
        elif pattern[index] == "*":
            regex, index = regex + "[^/]*", index + 1
        elif pattern[index] == "?":
            regex, index = regex + "[^/]", index + 1
        else:
            regex, index = regex + re.escape(pattern[index]), index + 1
    return re.compile(regex, re.DOTALL)
