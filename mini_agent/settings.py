"""Settings: one frozen object built once by the CLI from flags and environment, passed down; and, on each field,
its declaration (`setting(...)`): the flag, variable and config-file key that set it and the range it must be in."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from mini_agent import locations
from mini_agent.errors import ConfigError
from mini_agent.safety.credential_places import SECRET_NAME
from mini_agent.safety.rules import Rules

if TYPE_CHECKING:
    from mini_agent.safety.secrets import SecretSet

PermissionMode = Literal["default", "accept-edits", "auto", "plan", "bypass"]
OutputFormat = Literal["text", "json", "stream-json"]
PERMISSION_MODES: tuple[str, ...] = ("default", "accept-edits", "auto", "plan")
"""Modes a user picks with --permission-mode; bypass comes only from --dangerously-skip-permissions."""
CLAUDE_MODES = {"acceptEdits": "accept-edits", "bypassPermissions": "bypass"}
"""Claude Code's spellings of the same modes (its `default`, `plan` and `auto` are spelt as here)."""


def mode_named(text: str) -> str:
    """The mode `text` names, in this spelling or Claude Code's; anything else unchanged (and refused later)."""
    return CLAUDE_MODES.get(text, text)


MIN_SECRET_LENGTH = 8
"""Shorter values ("1", "true") would mask ordinary words; real keys and tokens are longer."""
OUTPUT_FORMATS: tuple[str, ...] = ("text", "json", "stream-json")
EFFORT_LEVELS: tuple[str, ...] = ("off", "low", "medium", "high", "max")
"""How hard the model thinks (--effort, /effort); what each level sends: model/thinking.py, docs/thinking.md."""
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_CONTEXT_WINDOW = 200_000
"""The window assumed when neither the settings nor the endpoint say."""


class Setting(NamedTuple):  # a NamedTuple, not a dataclass: settings.py is on the -p path, this is faster to build
    """How the user sets one Settings field, declared on the field: the flag, the environment variable and the
    config-file key that set it, who may set it, what a good value is and how `mini-agent config` shows it.
    cli/config.py resolves the layers, cli/main.py builds the flag's option and cli/config_view.py prints the
    provenance from these declarations alone."""

    flags: tuple[str, ...] = ()
    """The command-line flag, then its short forms."""
    env: str | None = None
    key: str | None = None
    """The key in config.toml."""
    help: str = ""
    """The flag's line in --help."""
    user_only: str | None = None
    """Only the user's own config may set the key: a project's file (it arrives with a cloned repository) is
    ignored, with the notice "only your own config can <this>"."""
    within: Callable[[Any], bool] | None = None
    must: str = ""
    """What `within` requires, for the error; `example` is a good value."""
    example: str = ""
    shown: bool = True
    """Printed by `mini-agent config`: not credentials, not what another command lists, not one run's flags."""
    unset: str | None = None
    """What an empty value means in `mini-agent config`, when that is not simply "none"."""

    @property
    def flag(self) -> str | None:
        return self.flags[0] if self.flags else None


def setting(
    default: Any = MISSING,
    *,
    default_factory: Any = MISSING,
    repr: bool = True,  # noqa: A002 - the name dataclasses.field uses
    flag: str | tuple[str, ...] = (),
    **declaration: Any,
) -> Any:
    """A Settings field with its declaration (see Setting)."""
    flags = (flag,) if isinstance(flag, str) else flag
    return field(
        default=default,
        default_factory=default_factory,
        repr=repr,
        metadata={"setting": Setting(flags=flags, **declaration)},
    )


_KEY_ROUTE = "choose where your key goes"
_DAY = 86_400


@dataclass(frozen=True)
class Settings:
    model: str = setting(
        DEFAULT_MODEL,
        flag=("--model", "-m"),
        env="ANTHROPIC_MODEL",
        key="model",
        help="Model id [env: ANTHROPIC_MODEL].",
        unset="(the first one the endpoint lists)",
    )
    """Model id sent with every request."""
    provider: str | None = setting(
        None,
        flag="--provider",
        env="MINI_AGENT_PROVIDER",
        key="provider",
        user_only=_KEY_ROUTE,
        help="anthropic | deepseek | moonshot | zai | zhipu | qwen | minimax | ollama | vllm | llamacpp | lmstudio | "
        "litellm | openrouter (-cn: the China endpoint of moonshot, qwen, minimax): sets the base URL, default model "
        "and key variable.",
    )
    """The provider preset the base URL, model and key variable came from, if any."""
    base_url: str = setting(
        DEFAULT_BASE_URL,
        flag="--base-url",
        env="ANTHROPIC_BASE_URL",
        key="base_url",
        user_only=_KEY_ROUTE,
        help="Anthropic-compatible endpoint [env: ANTHROPIC_BASE_URL].",
    )
    """Endpoint of an Anthropic-compatible Messages API."""
    api_key_variable: str | None = setting(None, key="api_key_variable", user_only=_KEY_ROUTE, shown=False)
    """The variable the key is read from instead of the provider's (the user's own config only)."""
    api_key: str | None = setting(None, repr=False, shown=False)
    """ANTHROPIC_API_KEY: sent as `Authorization: Bearer` (the SDK's 2.x sends either kind of key so). Never
    printed, logged or saved."""
    auth_token: str | None = setting(None, repr=False, shown=False)
    """Sent as a bearer token (ANTHROPIC_AUTH_TOKEN), for gateways such as LiteLLM or OpenRouter."""
    max_steps: int = setting(
        50,
        flag="--max-steps",
        key="max_steps",
        help="Model requests allowed per turn [default: 50].",
        within=lambda v: 1 <= v <= 100_000,
        must="a whole number from 1 to 100000",
        example="50",
    )
    """Model requests allowed in one turn before the run stops."""
    max_tokens: int = setting(
        8192,
        flag="--max-tokens",
        key="max_tokens",
        help="Output tokens per reply [default: 8192].",
        within=lambda v: 1 <= v <= 10_000_000,
        must="a whole number from 1 to 10000000",
        example="8192",
    )
    """Output tokens allowed per reply."""
    effort: str = setting(
        "off",
        flag="--effort",
        env="MINI_AGENT_EFFORT",
        key="effort",
        help="Thinking: off | low | medium | high | max [default: off].",
        within=lambda v: v in EFFORT_LEVELS,
        must="one of off, low, medium, high, max",
        example="medium",
    )
    """Extended thinking or the endpoint's effort setting, on models that take one (model/thinking.py)."""
    max_retries: int = setting(
        4,
        flag="--max-retries",
        env="MINI_AGENT_MAX_RETRIES",
        key="max_retries",
        help="Retries per request on 429/5xx/529/cuts [default: 4].",
        within=lambda v: 0 <= v <= 100,
        must="a whole number from 0 to 100",
        example="4",
    )
    """Retries of one request after 429, 5xx, 529, a dropped connection or a stream cut."""
    retry_base_delay: float = setting(
        1.0,
        env="MINI_AGENT_RETRY_BASE_DELAY",
        within=lambda v: 0 <= v <= 600,
        must="a number of seconds from 0 to 600",
        example="1.0",
    )
    """First backoff delay in seconds; doubles per retry, with jitter."""
    request_timeout: float = setting(
        600.0,
        env="MINI_AGENT_TIMEOUT",
        key="request_timeout",
        within=lambda v: 0 < v <= _DAY,
        must="a number of seconds above 0 (at most a day)",
        example="600",
    )
    """Seconds a request may take to connect and be sent."""
    stream_idle_timeout: float = setting(
        120.0,
        env="MINI_AGENT_STREAM_IDLE_TIMEOUT",
        key="stream_idle_timeout",
        within=lambda v: 0 < v <= _DAY,
        must="a number of seconds above 0 (at most a day)",
        example="120",
    )
    """Seconds a reply may send nothing (no header, no event; Anthropic sends a ping every few seconds) before
    the attempt is abandoned and retried: a stalled stream is noticed in two minutes, not ten. A local server
    that reads a long prompt before its first token may need more."""
    context_window: int | None = setting(
        None,
        env="MINI_AGENT_CONTEXT_WINDOW",
        key="context_window",
        within=lambda v: v is None or 1024 <= v <= 100_000_000,
        must="at least 1024 tokens",
        example="200000",
        unset=f"(what the endpoint reports, else {DEFAULT_CONTEXT_WINDOW})",
    )
    """Context window in tokens; unset: what the endpoint says (provider/discovery.py), else
    DEFAULT_CONTEXT_WINDOW."""
    permission_mode: PermissionMode = setting(
        "default", flag="--permission-mode", key="permission_mode", help="default | accept-edits | auto | plan."
    )
    """default: ask before changes; accept-edits; auto: ask only for risky calls; plan: read-only;
    bypass: run everything (--dangerously-skip-permissions)."""
    rules: Rules = setting(default_factory=Rules, shown=False)
    """Permission rules from the user's and the project's config files and --allow / --deny / --ask."""
    config_files: tuple[Path, ...] = setting((), shown=False)
    """The config files the rules came from (or would): protected from the agent's own writes."""
    env_secrets: tuple[str, ...] = setting((), repr=False, shown=False)
    """Values of environment variables whose names look secret (*_KEY, *_TOKEN, *_SECRET, *PASSWORD*):
    masked in tool output."""
    cwd: Path = field(default_factory=Path.cwd)
    """Working directory of the session; bash may move it."""
    stdin_limit: int = 100_000
    """Characters of piped input attached to the prompt; the rest is cut with a notice."""
    user_dir: Path = field(default_factory=lambda: default_user_dir(os.environ))
    """User-level files: AGENTS.md (global instructions) and memory.md (MINI_AGENT_HOME, else
    $XDG_CONFIG_HOME/mini-agent or ~/.config/mini-agent)."""
    data_dir: Path = field(default_factory=lambda: default_data_dir(os.environ))
    """Sessions, snapshots for undo and input history (MINI_AGENT_HOME, else $XDG_DATA_HOME/mini-agent or
    ~/.local/share/mini-agent)."""
    context_budget: float = setting(
        0.10,
        env="MINI_AGENT_CONTEXT_BUDGET",
        key="context_budget",
        within=lambda v: 0 <= v <= 1,
        must="a share of the window between 0 and 1",
        example="0.1",
    )
    """Share of the context window that injected context blocks may use."""
    context_timeout: float = setting(
        0.5,
        env="MINI_AGENT_CONTEXT_TIMEOUT",
        key="context_timeout",
        within=lambda v: 0 < v <= 600,
        must="a number of seconds above 0 (at most 600)",
        example="0.5",
    )
    """Seconds each context source and enricher may take before it is skipped."""
    compact_threshold: float = setting(
        0.8,
        flag="--compact-threshold",
        env="MINI_AGENT_COMPACT_THRESHOLD",
        key="compact_threshold",
        help="Compact at this share of the context window; 0 turns it off [default: 0.8].",
        within=lambda v: 0 <= v <= 1,
        must="a share of the window between 0 and 1",
        example="0.8",
    )
    """Compact when the conversation passes this share of the window; 0 turns automatic compaction off."""
    compact_model: str | None = setting(None, env="MINI_AGENT_COMPACT_MODEL", key="compact_model")
    """Model that writes compaction summaries, e.g. a cheaper one; the session's model when unset."""
    compact_focus: str | None = setting(
        None, flag="--compact-focus", help="What every compaction in this run should keep in focus.", shown=False
    )
    """What every compaction of this run should keep in focus."""
    compact_first: bool = setting(
        False,
        flag="--compact",
        help="Compact the conversation before the task runs (with --compact-focus as focus).",
        shown=False,
    )
    """Compact the conversation before the run's turn, as `/compact` does."""
    trace: bool = setting(
        False,
        flag="--trace",
        help="Show what context the agent added to each turn, and what it skipped or dropped.",
        shown=False,
    )
    """Show, per turn, what each context source and enricher added or why not."""
    mcp_servers: tuple = setting((), shown=False)  # listed, header values masked, by `mini-agent mcp list`
    """MCP servers (`mcp.servers.ServerDef`) from [mcp_servers] of the config files and the project's .mcp.json."""
    trust_project_mcp: bool = setting(
        False,
        flag="--trust-project-mcp",
        key="trust_project_mcp",
        user_only="trust a project's MCP servers",
        help="Start the project's MCP servers (.mcp.json) without asking.",
    )
    """Start a project's MCP servers without asking."""
    warm_start: bool = setting(
        True, key="warm_start", user_only="turn the warm server on or off (it is read before any project is)"
    )
    """Hand invocations to a warm server that has everything imported (`warm_start = false` in the user's config,
    or MINI_AGENT_NO_SERVER=1, turns it off); read by mini_agent/entry.py before any of this is imported."""
    mcp_timeout: float = setting(
        5.0,
        env="MINI_AGENT_MCP_TIMEOUT",
        key="mcp_timeout",
        within=lambda v: 0 < v <= 3600,
        must="a number of seconds above 0 (at most 3600)",
        example="5",
    )
    """Seconds a one-shot run's first request waits for its MCP servers; later ones join when ready."""
    mcp_call_timeout: float = setting(
        120.0,
        env="MINI_AGENT_MCP_CALL_TIMEOUT",
        key="mcp_call_timeout",
        within=lambda v: 0 < v <= _DAY,
        must="a number of seconds above 0 (at most a day)",
        example="120",
    )
    """Seconds one MCP tool call may take before it is given up."""
    mcp_schema_share: float = setting(
        0.1,
        env="MINI_AGENT_MCP_SCHEMA_SHARE",
        key="mcp_schema_share",
        within=lambda v: 0 <= v <= 1,
        must="a share of the context window between 0 and 1",
        example="0.1",
    )
    """Past this share of the context window, MCP tools' schemas are left out of requests and the model finds the
    ones it needs with tool_search (0: always, 1: never)."""
    hooks: tuple = setting((), shown=False)  # listed below the settings by `mini-agent config`, one line each
    """Hooks (`hooks.HookDef`) from [[hooks.<Event>]] tables of the config files, the user's first."""
    trust_project_hooks: bool = setting(
        False,
        flag="--trust-project-hooks",
        key="trust_project_hooks",
        user_only="trust a project's hooks",
        help="Run the project's hooks ([[hooks.*]] in its config) without asking.",
    )
    """Run a project's hooks without asking."""
    trust_project_rules: bool = setting(
        False,
        flag="--trust-project-rules",
        key="trust_project_rules",
        user_only="trust a project's allow rules",
        help="Obey the allow rules of the project's config and its commands' allowed-tools without asking.",
    )
    """Obey the allow rules of a project's config and its commands' allowed-tools without asking."""

    @property
    def private_dirs(self) -> tuple[Path, ...]:
        """mini-agent's own data (sessions, the prompt history, trust) and cache: no tool reads them unasked."""
        return (self.data_dir, Path(locations.cache_dir(os.environ)))

    @cached_property
    def secrets(self) -> list[str]:
        """Values that must never appear in output, longest first so a key containing another is masked whole."""
        values = {value for value in (self.api_key, self.auth_token, *self.env_secrets) if _secret_sized(value)}
        return sorted(values, key=len, reverse=True)

    @cached_property
    def secret_set(self) -> SecretSet:
        """The session's known secrets, shared by the agent, the gate, the tools and the session file: these
        values, the project's `.env*` files, and what the agent reads from credential files."""
        from mini_agent.safety.secrets import SecretSet

        names = {value: name for name, value in os.environ.items() if SECRET_NAME.search(name)}
        # Named by the variable that holds it, so a question says plainly "the value of ANTHROPIC_API_KEY".
        known = [(self.api_key, names.get(self.api_key or "", "the API key"))]
        known += [(self.auth_token, names.get(self.auth_token or "", "the auth token"))]
        known += [(value, names.get(value, "a secret environment variable")) for value in self.env_secrets]
        return SecretSet([(value, label) for value, label in known if _secret_sized(value)], project=self.cwd)

    def require_credentials(self, variable: str | None = None) -> None:
        """`variable`: the one the key is read from when it is not ANTHROPIC_API_KEY (a provider's own, or
        api_key_variable), named in the error: a provider never gets another's key."""
        if self.api_key or self.auth_token:
            return
        if variable and variable != "ANTHROPIC_API_KEY":
            whose = f"--provider {self.provider}" if self.provider else "api_key_variable"
            raise ConfigError(
                f"No API key: {whose} reads it from {variable}, which is not set (`export {variable}=...`). "
                "ANTHROPIC_API_KEY is never sent to another provider's server."
            )
        if not (self.api_key or self.auth_token):
            raise ConfigError(
                "No API key configured. Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway), e.g. "
                "`export ANTHROPIC_API_KEY=sk-...`; local servers such as Ollama accept any value."
            )


def _secret_sized(value: str | None) -> bool:
    """Long enough to be a key: a local server's placeholder (`ollama`, `EMPTY`) is a word, and masking it
    case-insensitively would garble every mention of the server (`Ollama`, `OLLAMA_CONTEXT_LENGTH`)."""
    return bool(value) and len(value.strip()) >= MIN_SECRET_LENGTH


def default_user_dir(env: Mapping[str, str]) -> Path:
    return Path(locations.user_dir(env))


def default_data_dir(env: Mapping[str, str]) -> Path:
    return Path(locations.data_dir(env))


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of the variables whose names look secret, long enough to be keys rather than flags."""
    return tuple(
        value for name, value in env.items() if SECRET_NAME.search(name) and len(value.strip()) >= MIN_SECRET_LENGTH
    )


def declared() -> tuple[tuple[str, Setting], ...]:
    """Every Settings field with a declaration, in field order, with it."""
    return tuple((item.name, item.metadata["setting"]) for item in fields(Settings) if "setting" in item.metadata)


def check_settings(settings: Settings, sources: Mapping[str, str] | None = None) -> None:
    """Every value in range; an error names where the bad value was set (file and key, variable or flag) and
    what to write instead. NaN fails every range test, so it is refused too."""
    sources = sources or {}
    if settings.permission_mode not in (*PERMISSION_MODES, "bypass"):
        where = _where("permission_mode", sources)
        raise ConfigError(
            f"{where}: unknown permission mode {settings.permission_mode!r}; use one of {', '.join(PERMISSION_MODES)}."
        )
    for name, declaration in declared():
        value = getattr(settings, name)
        if declaration.within is not None and not declaration.within(value):
            where = _where(name, sources)
            fix = f"{name} = {declaration.example}" if " in " in where else declaration.example
            raise ConfigError(f"{where} must be {declaration.must}, got {value!r}; for example {fix}.")
    if not settings.base_url.startswith(("http://", "https://")):
        where = _where("base_url", sources)
        raise ConfigError(f"{where}: the base URL must start with http:// or https://, got {settings.base_url!r}.")


def _where(name: str, sources: Mapping[str, str]) -> str:
    """How the user set a setting: `max_steps in /home/u/.config/mini-agent/config.toml`, `MINI_AGENT_TIMEOUT`,
    `--max-steps`, or the setting's name when it came from a provider preset or a default."""
    source = sources.get(name, "")
    if source.startswith("--"):
        return source
    if source.startswith("env "):
        return source[len("env ") :]
    if source and not source.startswith("provider "):
        return f"{name} in {source}"
    return name
