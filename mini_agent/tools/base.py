"""Tools as typed functions: the @tool decorator, the registry, and the context every tool receives.

A tool is a plain function whose first parameter is `ctx: ToolContext`. Its name, description and JSON
schema come from the signature and the docstring (written for the model, with an `Args:` section); the facts
other parts read about it (its Claude-style alias, its key argument, whether it edits files) are arguments of
the @tool declaration, in this one place. It
returns text (or a ToolResult, to say more: a command's exit code) or raises ToolError; the registry turns each,
and any unexpected exception, into a ToolResult.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mini_agent.safety.workspace import resolve_path
from mini_agent.tools._stamps import FileStamp

if TYPE_CHECKING:
    from mini_agent.safety.secrets import SecretSet
    from mini_agent.tools.todo_list import Todo

Risk = Literal["read", "write", "exec", "network", "mcp"]
"""mcp: a tool of an MCP server, whose effects the agent cannot know (asks in default mode)."""


class ToolError(Exception):
    """A failure the model should read and can act on; becomes an is_error tool_result."""


class ToolInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a running tool; `output` is what it had produced by then (a command's output so far).
    `told`, when given, is the whole result instead: a call that changed nothing (a question put to the human)."""

    def __init__(self, output: str = "", told: str | None = None) -> None:
        super().__init__()
        self.output, self.told = output, told


class NetworkError(ToolError):
    """The tool could not reach the network; repeated ones mark the tool as degraded."""


@dataclass
class ToolContext:
    """Session state the tools share: working directory, the user's request, files seen."""

    cwd: Path
    request: str = ""
    """The user's own words for the current turn, for tools that delegate or summarise."""
    read_files: dict[Path, FileStamp] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    data_dir: Path | None = None
    """The agent's data directory: temporary files of atomic writes are recorded under it while they exist, so
    the next start removes those a killed agent left behind. None records nothing."""
    check_destination: Callable[[str, str, str], None] | None = None
    """Called as (url, host, reason) before web_fetch connects to a loopback, private, link-local or metadata
    address; returns to allow, raises ToolError to refuse. None allows every destination."""
    notify: Callable[[str], None] | None = None
    """Tells the human something beside the model (a notice line in the REPL, stderr with -p): what a sandboxed
    command changed in the git dir. None tells nobody."""
    confinement: Any = None
    """The OS sandbox (a `safety.sandbox.Confinement`) the shell command about to run is confined to; None runs
    it outside. Set by the agent around each exec call."""
    secrets: SecretSet | None = field(default=None, repr=False)
    """The session's known secrets: read_file adds the values of the credential files it reads."""
    checked_paths: dict[str, tuple[Path, Path]] = field(default_factory=dict, repr=False)
    """Path arguments as the permission policy last resolved them: text -> (working directory, resolved path)."""
    jobs: Any = field(default=None, repr=False)
    """The session's background jobs (a `processes.jobs.JobTable`), made on first use (`job_table`); a
    sub-agent shares its parent's."""
    cancelled: threading.Event = field(default_factory=threading.Event, repr=False)
    """Set when Ctrl-C stopped a reply's calls while some still ran in worker threads, which the interrupt does
    not reach: a long-running one (a sub-agent) checks it and stops."""
    review_plan: Callable[[str], tuple[str, str | None] | None] | None = field(default=None, repr=False)
    """Puts a plan to the human (exit_plan_mode): returns the permission mode they approved it in (already in
    force) and their edited version of the plan (None if unedited), or None when nobody can be asked; raises
    ToolError with their feedback when they keep planning, KeyboardInterrupt on Ctrl-C. None: this agent
    presents no plans (a sub-agent)."""

    def job_table(self):
        """The session's background jobs, their spools under the data dir (hidden from every sandbox)."""
        with self.lock:
            if self.jobs is None:
                from mini_agent.processes.jobs import JobTable

                self.jobs = JobTable(self.data_dir)
            return self.jobs

    def resolve(self, path: str) -> Path:
        """An absolute path: `~` expanded, relative paths taken from the working directory."""
        return resolve_path(self.cwd, path)

    def pin(self, text: str, resolved: Path) -> None:
        """Record what the permission policy resolved a path argument to (from the current directory)."""
        with self.lock:
            self.checked_paths[text] = (self.cwd, resolved)

    def checked(self, text: str) -> Path:
        """The resolved path a file tool must open for this argument: the one the policy judged, else (a tool run
        without the policy) the path resolved now. See _exact.py."""
        with self.lock:
            pinned = self.checked_paths.get(text)
        if pinned is not None and pinned[0] == self.cwd:
            return pinned[1]
        try:
            return Path(os.path.realpath(self.resolve(text)))
        except OSError:  # a link swapped for a file while realpath read it: opening what is written refuses a link
            return self.resolve(text)

    def remember(self, path: Path, data: bytes | None = None) -> None:
        """Record that the agent has seen this file as it is on disk now (after a read or its own write).

        `data` is the file's whole content when the caller has it (what it just wrote), saving a read.
        """
        stamp = FileStamp.of(path, data)  # outside the lock: hashing may read up to HASHED_UP_TO bytes
        with self.lock:
            self.read_files.pop(path, None)  # re-inserted last: the dict's order is recency
            self.read_files[path] = stamp

    def recent_files(self, limit: int = 10) -> tuple[Path, ...]:
        """Files the agent read or changed, most recent first."""
        with self.lock:
            return tuple(reversed(self.read_files))[:limit]

    def require_fresh(self, path: Path, data: bytes | None = None) -> None:
        """Refuse to change a file the agent has not read, or whose content changed on disk since it did.

        `data` is the file's current content when the caller has already read it (edit_file), so the check is
        on exactly the bytes about to be edited.
        """
        with self.lock:
            seen = self.read_files.get(path)
        if seen is None:
            raise ToolError(f"{path} has not been read in this session. Read it with read_file first, then retry.")
        if not seen.unchanged(path, data):
            raise ToolError(
                f"{path} changed on disk since it was last read (by the user or another program). "
                "Read it again with read_file, then retry."
            )


@dataclass(frozen=True)
class ToolResult:
    """What goes back to the model as a tool_result block."""

    content: str
    is_error: bool = False
    network_error: bool = False
    shown: str | None = None
    """One plain line a human is shown instead of `content`, when that is written for the model."""
    blocks: tuple[dict, ...] = ()
    """Content blocks sent after the text, e.g. the images an MCP tool returned."""
    exit_code: int | None = None
    """How the command the call ran ended, as the shell reports it (128 + N for signal N); None: it ran none."""
    killed_by: str | None = None
    """The name of the signal that ended the command (`SIGKILL`), when one did."""
    todos: tuple[Todo, ...] | None = None
    """The agent's todo list as this call set it (todo_write): the session keeps it, the front ends show it."""
    answer: str | None = None
    """The turn ends once the reply's calls are settled, with this as its answer: a plan nobody could approve."""


@dataclass(frozen=True)
class Tool:
    """A tool the model can call, derived from a typed, documented function."""

    name: str
    description: str
    input_schema: dict
    fn: Callable[..., str]
    guidance: str
    """A paragraph for system-prompt segment 2: when and how to use the tool well."""
    risk: Risk
    validator: Any = field(repr=False, compare=False)
    precheck: Callable[..., None] | None = field(default=None, repr=False, compare=False)
    """`precheck(ctx, **arguments)` raises the ToolError running the call would raise, without changing
    anything, so a call that cannot succeed is never put to a human for approval."""
    concurrent: Callable[[dict], bool] | None = field(default=None, repr=False, compare=False)
    """For a read tool: whether this call may run beside the reply's other read-only calls (None: it may).
    The `task` tool says yes only for sub-agents that can only read."""
    alias: str | None = None
    """The name other agents give this tool (`Read`, `Bash`, `Task`): hooks' matchers, command files'
    `allowed-tools` and agent files' `tools:` accept it beside the name (ToolRegistry.named)."""
    key_argument: str | None = None
    """The one argument that says what a call does (the path, the command, the URL, the sub-task): what its
    one-line description, its approval question and its denial records show."""
    edits_files: bool = False
    """It changes the file its `key_argument` names: the changed file is reported (sub-agents, context sources)
    and shown as a diff."""

    def judged(self, arguments: dict) -> tuple[str, str, dict]:
        """The call as the permission policy and the egress check judge it: (name, risk, arguments). A tool that
        stands for another's call says so (reading an MCP server's resource is a call to that server)."""
        return self.name, self.risk, arguments

    def schema(self) -> dict:
        """The tool as the Messages API `tools` parameter expects it."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def validate(self, arguments: object) -> dict:
        """The arguments checked against the schema and coerced; ToolError says what was wrong."""
        from pydantic import ValidationError

        from mini_agent.tools._arguments import unpaired_surrogate

        if not isinstance(arguments, dict):
            raise ToolError(
                f"Invalid arguments for {self.name}: expected a JSON object, got {type(arguments).__name__}."
            )
        try:
            model = self.validator.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(_describe_error(error) for error in exc.errors())
            raise ToolError(f"Invalid arguments for {self.name}: {problems}.") from None
        validated = {name: getattr(model, name) for name in self.input_schema["properties"]}
        for name, value in validated.items():
            # Not valid Unicode: it cannot be encoded for a file, a command line, a terminal or a request body.
            problem = unpaired_surrogate(value) if isinstance(value, str) else None
            if problem:
                raise ToolError(f"Invalid arguments for {self.name}: '{name}' {problem}.")
        return validated


def _describe_error(error: dict) -> str:
    from mini_agent.tools._arguments import CUSTOM_ERRORS

    where = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
    message = error.get("msg", "invalid")
    if error.get("type") == "extra_forbidden":
        return f"unknown parameter '{where}'"
    if error.get("type") == "missing":
        return f"missing required parameter '{where}'"
    if error.get("type") in CUSTOM_ERRORS:
        return f"'{where}' {message}"
    return f"'{where}': {message}"


def tool(
    *,
    risk: Risk,
    guidance: str,
    precheck: Callable[..., None] | None = None,
    alias: str | None = None,
    key_argument: str | None = None,
    edits_files: bool = False,
    alone: bool = False,
) -> Callable[[Callable[..., str]], Tool]:
    """Turn a typed function `fn(ctx, ...) -> str` with a Google-style docstring into a Tool.

    `precheck` takes the same arguments as `fn` and raises, without side effects, the ToolError `fn` would.
    `alias`, `key_argument` and `edits_files` are the tool's facts (see Tool); `key_argument` must be a
    parameter of `fn`, and a tool that edits files names the file in it. `alone`: a read tool that never runs
    beside others (it asks the human, or its calls' order matters).
    """

    def decorate(fn: Callable[..., str]) -> Tool:
        description, validator, schema = _describe(fn)
        if key_argument is not None and key_argument not in schema["properties"]:
            raise TypeError(f"{fn.__name__}: the key argument {key_argument!r} is not one of its parameters")
        if edits_files and key_argument is None:
            raise TypeError(f"{fn.__name__}: a tool that edits files names the file in its key argument")
        return Tool(
            fn.__name__,
            description,
            schema,
            fn,
            " ".join(guidance.split()),
            risk,
            validator,
            precheck,
            alias=alias,
            key_argument=key_argument,
            edits_files=edits_files,
            concurrent=_never if alone else None,
        )

    return decorate


def _never(arguments: dict) -> bool:
    return False


def _describe(fn: Callable[..., str]) -> tuple[str, Any, dict]:
    from docstring_parser import DocstringStyle, parse
    from pydantic import ConfigDict, Field, create_model

    doc = parse(inspect.getdoc(fn) or "", DocstringStyle.GOOGLE)  # the style @tool asks for: no guessing
    arg_docs = {param.arg_name: " ".join((param.description or "").split()) for param in doc.params}
    description = "\n\n".join(part for part in (doc.short_description, doc.long_description) if part)
    fields: dict[str, Any] = {}
    hints = inspect.get_annotations(fn, eval_str=True)
    for name, param in list(inspect.signature(fn).parameters.items())[1:]:
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[name] = (hints[name], Field(default, description=arg_docs.get(name) or None))
    validator = create_model(f"{fn.__name__}_arguments", __config__=ConfigDict(extra="forbid"), **fields)
    schema = validator.model_json_schema()
    return description, validator, _tidy_schema(_inline_refs(schema, schema.get("$defs", {})))


def _inline_refs(node: Any, defs: dict) -> Any:
    """Nested models (todo_write's items) written in place: one self-contained schema, as tools' schemas are."""
    if isinstance(node, list):
        return [_inline_refs(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        rest = {key: value for key, value in node.items() if key != "$ref"}
        return _inline_refs({**defs[ref.removeprefix("#/$defs/")], **rest}, defs)
    return {key: _inline_refs(value, defs) for key, value in node.items() if key != "$defs"}


def _tidy_schema(node: Any) -> Any:
    """Drop pydantic's titles and collapse `X | None` to X: shorter schemas, same meaning to the model."""
    if isinstance(node, list):
        return [_tidy_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if options and len(options) == 2 and {"type": "null"} in options:
        merged = {key: value for key, value in node.items() if key != "anyOf"}
        merged.update(next(option for option in options if option != {"type": "null"}))
        node = merged
    if node.get("default", 0) is None:
        node = {key: value for key, value in node.items() if key != "default"}
    return {key: _tidy_schema(value) for key, value in node.items() if not (key == "title" and isinstance(value, str))}


class ToolRegistry:
    """The tools of a session by name: schemas for the request, guidance for the prompt, calls."""

    def __init__(self, tools: list[Tool]) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._schemas = [tool.schema() for tool in tools]
        self._builtin = len(tools)
        self._builtin_schemas = list(self._schemas)
        self.deferred: Any = None
        """Set by `defer_extra`: past a budget the extra tools are found with a search (tools/deferred.py)."""

    def replace_extra(self, tools: list[Tool]) -> None:
        """Set the tools added after the built-in ones (MCP servers'), in the given order. Both maps are
        rebuilt and swapped whole, so a request being built on another thread sees the old set or the new."""
        builtin = list(self._tools.values())[: self._builtin]
        everything = [*builtin, *tools, *([self.deferred.tool] if self.deferred is not None else [])]
        self._schemas, self._tools = [tool.schema() for tool in everything], {tool.name: tool for tool in everything}

    def defer_extra(self, deferred: Any) -> None:
        """Offer the extra tools through `deferred` (a tools.deferred.DeferredTools of this registry, with its
        `tool_search`) once their schemas outgrow the budget `schemas` is given."""
        extra = self.extra_tools()
        self.deferred = deferred
        self.replace_extra(extra)

    def builtin_schemas(self) -> list[dict]:
        return self._builtin_schemas

    def extra_tools(self) -> list[Tool]:
        return list(self._tools.values())[self._builtin :]

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def __iter__(self):
        return iter(self._tools.values())

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def named(self, name: str) -> Tool | None:
        """The tool of this name or of this alias (`Read` is read_file): how extension points written for other
        agents (hook matchers, command files, agent files) name a tool."""
        found = self._tools.get(name)
        return found or next((tool for tool in self._tools.values() if tool.alias == name), None)

    def schemas(self, budget_chars: int | None = None) -> list[dict]:
        """The `tools` request parameter; the same list every time, so requests stay byte-identical. With
        `defer_extra`, extra tools whose schemas exceed `budget_chars` are left to `tool_search`."""
        return self._schemas if self.deferred is None else self.deferred.schemas(budget_chars)

    def guidance(self) -> str:
        """System-prompt segment 2: one paragraph per tool."""
        return "\n".join(f"- **{tool.name}**: {tool.guidance}" for tool in self._tools.values() if tool.guidance)

    def call(self, name: str, arguments: object, ctx: ToolContext) -> ToolResult:
        """Run a tool; every failure comes back as an is_error result the model can read."""
        tool = self._tools.get(name)
        if tool is None:
            return self.unknown(name)
        try:
            arguments = tool.validate(arguments)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        return execute(tool, arguments, ctx)

    def unknown(self, name: str) -> ToolResult:
        return ToolResult(f"Unknown tool '{name}'. Available tools: {', '.join(self._tools)}.", is_error=True)


def execute(tool: Tool, arguments: dict, ctx: ToolContext) -> ToolResult:
    """Run a tool on validated arguments; every failure comes back as an is_error result."""
    name = tool.name
    try:
        value = tool.fn(ctx, **arguments)
        return value if isinstance(value, ToolResult) else ToolResult(value)
    except NetworkError as exc:
        return ToolResult(str(exc), is_error=True, network_error=True)
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # the tool boundary: a bug in a tool must not end the session
        return ToolResult(f"{name} failed unexpectedly: {type(exc).__name__}: {exc}", is_error=True)


def truncate_middle(text: str, limit: int, hint: Callable[[int], str]) -> str:
    """Keep the head and tail of an over-long text, cut the middle, and append `hint(omitted_chars)`."""
    if len(text) <= limit:
        return text
    half = limit // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n\n[... {omitted} characters omitted ...]\n\n{text[-half:]}\n{hint(omitted)}"
