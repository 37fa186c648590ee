"""Settings: one frozen object built once by the CLI from flags and environment, passed down."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mini_agent import locations
from mini_agent.errors import ConfigError
from mini_agent.safety.rules import Rules

if TYPE_CHECKING:
    from mini_agent.safety.secrets import SecretSet

PermissionMode = Literal["default", "accept-edits", "auto", "plan", "bypass"]
OutputFormat = Literal["text", "json", "stream-json"]
PERMISSION_MODES: tuple[str, ...] = ("default", "accept-edits", "auto", "plan")
"""Modes a user picks with --permission-mode; bypass comes only from --dangerously-skip-permissions."""
SECRET_NAME = re.compile(r"(_KEY|_TOKEN|_SECRET)$|PASSWORD|^(API_?KEY|TOKEN|SECRET)$", re.IGNORECASE)
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
    """Seconds without progress before a request is abandoned (MINI_AGENT_TIMEOUT)."""
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
    mcp_timeout: float = 10.0
    """Seconds a one-shot run waits for its MCP servers before it goes on without the late ones."""
    hooks: tuple = ()
    """Hooks (`hooks.HookDef`) from [[hooks.<Event>]] tables of the config files, the user's first."""
    trust_project_hooks: bool = False
    """Run a project's hooks without asking (--trust-project-hooks, or the user's own config)."""
    trust_project_rules: bool = False
    """Obey the allow rules of a project's config and its commands' allowed-tools without asking
    (--trust-project-rules, or the user's own config)."""

    @cached_property
    def secrets(self) -> list[str]:
        """Values that must never appear in output, longest first so a key containing another is masked whole."""
        values = {value for value in (self.api_key, self.auth_token, *self.env_secrets) if value}
        return sorted(values, key=len, reverse=True)

    @cached_property
    def secret_set(self) -> SecretSet:
        """The session's known secrets, shared by the agent, the gate, the tools and the session file: these
        values, the project's `.env*` files, and what the agent reads from credential files."""
        from mini_agent.safety.secrets import SecretSet

        names = {value: name for name, value in os.environ.items() if SECRET_NAME.search(name)}
        known = [(self.api_key, "the API key"), (self.auth_token, "the auth token")]
        known += [(value, names.get(value, "a secret environment variable")) for value in self.env_secrets]
        return SecretSet([(value, label) for value, label in known if value], project=self.cwd)

    def require_credentials(self) -> None:
        if not (self.api_key or self.auth_token):
            raise ConfigError(
                "No API key configured. Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN for a gateway), e.g. "
                "`export ANTHROPIC_API_KEY=sk-...`; local servers such as Ollama accept any value."
            )


def default_user_dir(env: Mapping[str, str]) -> Path:
    return Path(locations.user_dir(env))


def default_data_dir(env: Mapping[str, str]) -> Path:
    return Path(locations.data_dir(env))


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of the variables whose names look secret, long enough to be keys rather than flags."""
    return tuple(
        value for name, value in env.items() if SECRET_NAME.search(name) and len(value.strip()) >= MIN_SECRET_LENGTH
    )


def check_settings(settings: Settings) -> None:
    if settings.permission_mode not in (*PERMISSION_MODES, "bypass"):
        raise ConfigError(
            f"Unknown permission mode {settings.permission_mode!r}; use one of {', '.join(PERMISSION_MODES)}."
        )
    for name in ("max_steps", "max_tokens"):
        if getattr(settings, name) < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1.")
    for name in ("context_budget", "compact_threshold"):
        if not 0 <= getattr(settings, name) <= 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be a share of the window between 0 and 1.")
    if settings.context_window is not None and settings.context_window < 1024:
        raise ConfigError(f"The context window must be at least 1024 tokens, got {settings.context_window}.")
    if settings.max_retries < 0:
        raise ConfigError("--max-retries cannot be negative.")
    if not settings.base_url.startswith(("http://", "https://")):
        raise ConfigError(f"The base URL must start with http:// or https://, got {settings.base_url!r}.")
