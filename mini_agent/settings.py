"""Settings: one frozen object built once by the CLI from flags and environment, passed down."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

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
MIN_SECRET_LENGTH = 8
"""Shorter values ("1", "true") would mask ordinary words; real keys and tokens are longer."""
OUTPUT_FORMATS: tuple[str, ...] = ("text", "json", "stream-json")
DEFAULT_MODEL = "claude-sonnet-4-5"
DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_CONTEXT_WINDOW = 200_000
"""The window assumed when neither the settings nor the endpoint say."""


@dataclass(frozen=True)
class Settings:
    model: str = DEFAULT_MODEL
    """Model id sent with every request (--model, ANTHROPIC_MODEL)."""
    provider: str | None = None
    """The provider preset the base URL, model and key variable came from (--provider, config), if any."""
    base_url: str = DEFAULT_BASE_URL
    """Endpoint of an Anthropic-compatible Messages API (--base-url, ANTHROPIC_BASE_URL)."""
    api_key: str | None = field(default=None, repr=False)
    """Sent as x-api-key (ANTHROPIC_API_KEY). Never printed, logged or saved."""
    auth_token: str | None = field(default=None, repr=False)
    """Sent as a bearer token (ANTHROPIC_AUTH_TOKEN), for gateways such as LiteLLM or OpenRouter."""
    max_steps: int = 50
    """Model requests allowed in one turn before the run stops (--max-steps)."""
    max_tokens: int = 8192
    """Output tokens allowed per reply (--max-tokens)."""
    max_retries: int = 4
    """Retries of one request after 429, 5xx, 529, a dropped connection or a stream cut (--max-retries)."""
    retry_base_delay: float = 1.0
    """First backoff delay in seconds; doubles per retry, with jitter (MINI_AGENT_RETRY_BASE_DELAY)."""
    request_timeout: float = 600.0
    """Seconds a request may take to connect and be sent (MINI_AGENT_TIMEOUT)."""
    stream_idle_timeout: float = 120.0
    """Seconds a reply may send nothing (no header, no event; Anthropic sends a ping every few seconds) before
    the attempt is abandoned and retried (MINI_AGENT_STREAM_IDLE_TIMEOUT): a stalled stream is noticed in two
    minutes, not ten. A local server that reads a long prompt before its first token may need more."""
    context_window: int | None = None
    """Context window in tokens (MINI_AGENT_CONTEXT_WINDOW); unset: what the endpoint says (provider/discovery.py),
    else DEFAULT_CONTEXT_WINDOW."""
    permission_mode: PermissionMode = "default"
    """default: ask before changes; accept-edits; auto: ask only for risky calls; plan: read-only;
    bypass: run everything (--dangerously-skip-permissions)."""
    rules: Rules = field(default_factory=Rules)
    """Permission rules from the user's and the project's config files and --allow / --deny / --ask."""
    config_files: tuple[Path, ...] = ()
    """The config files the rules came from (or would): protected from the agent's own writes."""
    env_secrets: tuple[str, ...] = field(default=(), repr=False)
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
    context_budget: float = 0.10
    """Share of the context window that injected context blocks may use (MINI_AGENT_CONTEXT_BUDGET)."""
    context_timeout: float = 0.5
    """Seconds each context source and enricher may take before it is skipped (MINI_AGENT_CONTEXT_TIMEOUT)."""
    compact_threshold: float = 0.8
    """Compact when the conversation passes this share of the window; 0 turns automatic compaction off
    (--compact-threshold, MINI_AGENT_COMPACT_THRESHOLD)."""
    compact_model: str | None = None
    """Model that writes compaction summaries, e.g. a cheaper one; the session's model when unset
    (MINI_AGENT_COMPACT_MODEL)."""
    compact_focus: str | None = None
    """What every compaction of this run should keep in focus (--compact-focus)."""
    compact_first: bool = False
    """Compact the conversation before the run's turn, as `/compact` does (--compact)."""
    trace: bool = False
    """Show, per turn, what each context source and enricher added or why not (--trace)."""
    mcp_servers: tuple = ()
    """MCP servers (`mcp.servers.ServerDef`) from [mcp_servers] of the config files and the project's .mcp.json."""
    trust_project_mcp: bool = False
    """Start a project's MCP servers without asking (--trust-project-mcp, or the user's own config)."""
    warm_start: bool = True
    """Hand invocations to a warm server that has everything imported (`warm_start = false` in the user's config,
    or MINI_AGENT_NO_SERVER=1, turns it off); read by mini_agent/entry.py before any of this is imported."""
    mcp_timeout: float = 5.0
    """Seconds a one-shot run's first request waits for its MCP servers; later ones join when ready."""
    mcp_call_timeout: float = 120.0
    """Seconds one MCP tool call may take before it is given up (MINI_AGENT_MCP_CALL_TIMEOUT)."""
    hooks: tuple = ()
    """Hooks (`hooks.HookDef`) from [[hooks.<Event>]] tables of the config files, the user's first."""
    trust_project_hooks: bool = False
    """Run a project's hooks without asking (--trust-project-hooks, or the user's own config)."""
    trust_project_rules: bool = False
    """Obey the allow rules of a project's config and its commands' allowed-tools without asking
    (--trust-project-rules, or the user's own config)."""

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

    def require_credentials(self) -> None:
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


# What each checked number must be: (setting, test, what it must be, an example of a good value).
_LIMITS: tuple[tuple[str, object, str, str], ...] = (
    ("max_steps", lambda v: 1 <= v <= 100_000, "a whole number from 1 to 100000", "50"),
    ("max_tokens", lambda v: 1 <= v <= 10_000_000, "a whole number from 1 to 10000000", "8192"),
    ("max_retries", lambda v: 0 <= v <= 100, "a whole number from 0 to 100", "4"),
    ("retry_base_delay", lambda v: 0 <= v <= 600, "a number of seconds from 0 to 600", "1.0"),
    ("request_timeout", lambda v: 0 < v <= 86_400, "a number of seconds above 0 (at most a day)", "600"),
    ("stream_idle_timeout", lambda v: 0 < v <= 86_400, "a number of seconds above 0 (at most a day)", "120"),
    ("context_timeout", lambda v: 0 < v <= 600, "a number of seconds above 0 (at most 600)", "0.5"),
    ("mcp_timeout", lambda v: 0 < v <= 3600, "a number of seconds above 0 (at most 3600)", "5"),
    ("mcp_call_timeout", lambda v: 0 < v <= 86_400, "a number of seconds above 0 (at most a day)", "120"),
    ("context_budget", lambda v: 0 <= v <= 1, "a share of the window between 0 and 1", "0.1"),
    ("compact_threshold", lambda v: 0 <= v <= 1, "a share of the window between 0 and 1", "0.8"),
    ("context_window", lambda v: v is None or 1024 <= v <= 100_000_000, "at least 1024 tokens", "200000"),
)


def check_settings(settings: Settings, sources: Mapping[str, str] | None = None) -> None:
    """Every value in range; an error names where the bad value was set (file and key, variable or flag) and
    what to write instead. NaN fails every range test, so it is refused too."""
    sources = sources or {}
    if settings.permission_mode not in (*PERMISSION_MODES, "bypass"):
        where = _where("permission_mode", sources)
        raise ConfigError(
            f"{where}: unknown permission mode {settings.permission_mode!r}; use one of {', '.join(PERMISSION_MODES)}."
        )
    for name, within, requirement, example in _LIMITS:
        value = getattr(settings, name)
        if not within(value):
            where = _where(name, sources)
            fix = f"{name} = {example}" if " in " in where else example
            raise ConfigError(f"{where} must be {requirement}, got {value!r}; for example {fix}.")
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
