"""Effective settings from layers: defaults < user config < project config < environment < flags.

Each value remembers where it came from, for `mini-agent config`. A provider preset (`--provider deepseek`)
sets the base URL, the default model and the variable holding the key, at the layer that names it, so a model
named in the same or a higher layer still wins. A project's file (which arrives with a cloned repository)
may not route the user's key elsewhere (provider, base_url, api_key_variable) or loosen the permission mode.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mini_agent.config_files import project_config, read_toml, rules_in, user_config
from mini_agent.errors import ConfigError
from mini_agent.model.endpoints import PRESETS, Preset
from mini_agent.safety.rules import Origin, Rules, parse_rule
from mini_agent.settings import (
    Settings,
    check_settings,
    default_data_dir,
    default_user_dir,
    secret_values,
)

# Keys a config file may set, with their types.
FILE_KEYS: dict[str, type | tuple[type, ...]] = {
    "provider": str,
    "model": str,
    "base_url": str,
    "api_key_variable": str,
    "permission_mode": str,
    "max_steps": int,
    "max_tokens": int,
    "max_retries": int,
    "request_timeout": (int, float),
    "stream_idle_timeout": (int, float),
    "context_window": int,
    "context_budget": (int, float),
    "compact_threshold": (int, float),
    "compact_model": str,
    "context_timeout": (int, float),
    "mcp_timeout": (int, float),
    "mcp_call_timeout": (int, float),
    "trust_project_mcp": bool,
    "trust_project_hooks": bool,
    "trust_project_rules": bool,
    "warm_start": bool,
}
USER_ONLY = (
    "provider",
    "base_url",
    "api_key_variable",
    "trust_project_mcp",
    "trust_project_hooks",
    "trust_project_rules",
    "warm_start",
)
"""A project's file cannot send the user's key to another server, nor trust its own commands."""
USER_ONLY_WHY = {
    "trust_project_mcp": "trust a project's MCP servers",
    "trust_project_hooks": "trust a project's hooks",
    "trust_project_rules": "trust a project's allow rules",
    "warm_start": "turn the warm server on or off (it is read before any project is)",
}
PROJECT_MODES = ("default", "plan")
"""A project's file may only make the mode stricter than the default."""
ENV_TEXT = {
    "provider": "MINI_AGENT_PROVIDER",
    "model": "ANTHROPIC_MODEL",
    "base_url": "ANTHROPIC_BASE_URL",
    "compact_model": "MINI_AGENT_COMPACT_MODEL",
}
ENV_NUMBERS = {
    "max_retries": ("MINI_AGENT_MAX_RETRIES", int),
    "retry_base_delay": ("MINI_AGENT_RETRY_BASE_DELAY", float),
    "request_timeout": ("MINI_AGENT_TIMEOUT", float),
    "stream_idle_timeout": ("MINI_AGENT_STREAM_IDLE_TIMEOUT", float),
    "context_window": ("MINI_AGENT_CONTEXT_WINDOW", int),
    "context_budget": ("MINI_AGENT_CONTEXT_BUDGET", float),
    "compact_threshold": ("MINI_AGENT_COMPACT_THRESHOLD", float),
    "context_timeout": ("MINI_AGENT_CONTEXT_TIMEOUT", float),
    "mcp_timeout": ("MINI_AGENT_MCP_TIMEOUT", float),
    "mcp_call_timeout": ("MINI_AGENT_MCP_CALL_TIMEOUT", float),
}


@dataclass(frozen=True)
class Resolved:
    settings: Settings
    sources: dict[str, str]
    """Where each setting that is not a default came from: a file's path, `env NAME` or `--flag`."""
    notices: tuple[str, ...] = ()
    """Things the user should know, e.g. a project file's setting that was ignored."""
    key_variable: str | None = None
    """The environment variable the key was read from."""


@dataclass
class _Layers:
    values: dict[str, object] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)

    def put(self, name: str, value: object, source: str) -> None:
        if name == "provider":
            preset = _preset(str(value), source)
            # A preset without a model ("" here) takes the first one the endpoint lists (provider/discovery.py).
            for key, preset_value in (("base_url", preset.base_url), ("model", preset.model or "")):
                self.values[key], self.sources[key] = preset_value, f"provider {value}, {source}"
            self.values.pop("api_key_variable", None)
        self.values[name], self.sources[name] = value, source


def resolve(
    env: Mapping[str, str] | None = None,
    flags: Mapping[str, object] | None = None,
    cwd: Path | None = None,
    files: bool = True,
    allow: list[str] = (),
    deny: list[str] = (),
) -> Resolved:
    """The effective settings, and where each came from. `files=False` reads no config file (tests)."""
    env = os.environ if env is None else env
    cwd = cwd or Path.cwd()
    user_dir = default_user_dir(env)
    layers = _Layers()
    rules = Rules()
    config_files: tuple[Path, ...] = ()
    mcp_servers: tuple = ()
    hooks: tuple = ()
    if files:
        user_path, project_path = user_config(user_dir), project_config(cwd)
        config_files = (user_path, project_path or cwd / ".mini-agent" / "config.toml")
        user_data, project_data = read_toml(user_path), {}
        _apply_file(layers, user_data, user_path, project=False)
        rules += rules_in(user_data, Origin("user", str(user_path)))
        if project_path is not None:
            project_data = read_toml(project_path)
            _apply_file(layers, project_data, project_path, project=True)
            rules += rules_in(project_data, Origin("project", str(project_path)))
        from mini_agent.mcp.servers import configured

        mcp_servers = configured(user_data, user_path, project_data, project_path, cwd)
        from mini_agent.hooks.definitions import configured as configured_hooks

        hooks = configured_hooks(user_data, user_path, project_data, project_path)
    _apply_env(layers, env)
    for name, value in (flags or {}).items():
        if value is not None:
            layers.put(name, value, f"--{name.replace('_', '-')}")
    for effect, entries in (("allow", allow), ("deny", deny)):
        rules += Rules(tuple(parse_rule(entry, effect, Origin("flag", f"--{effect}")) for entry in entries))

    values: dict[str, object] = {
        "user_dir": user_dir,
        "data_dir": default_data_dir(env),
        "env_secrets": secret_values(env),
        "rules": rules,
        "config_files": config_files,
        "cwd": cwd,
        "mcp_servers": mcp_servers,
        "hooks": hooks,
    }
    key_variable = layers.values.pop("api_key_variable", None)
    provider = layers.values.get("provider")
    credentials, used = _credentials(env, PRESETS.get(str(provider)) if provider else None, key_variable)
    values.update(credentials)
    values.update(layers.values)
    if used:
        layers.sources["api_key"] = f"env {used}"
    for name, variable in (("user_dir", "MINI_AGENT_HOME"), ("data_dir", "MINI_AGENT_HOME")):
        if env.get(variable):
            layers.sources.setdefault(name, f"env {variable}")
    try:
        settings = Settings(**values)  # type: ignore[arg-type]
    except TypeError as exc:
        raise ConfigError(f"Unknown setting: {exc}.") from None
    check_settings(settings, layers.sources)
    return Resolved(settings, layers.sources, tuple(layers.notices), used)


def _apply_file(layers: _Layers, data: dict, path: Path, project: bool) -> None:
    # The provider first: its preset is the base that the file's own model or base_url refine.
    for name, value in sorted(data.items(), key=lambda item: item[0] != "provider"):
        if name in ("permissions", "mcp_servers", "hooks"):
            continue
        if name not in FILE_KEYS:
            known = ", ".join(sorted(FILE_KEYS))
            raise ConfigError(
                f"Unknown setting {name!r} in {path}; the settings are: {known}, [permissions], [mcp_servers], "
                "[[hooks.<Event>]]."
            )
        kind = FILE_KEYS[name]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise ConfigError(f"{name} in {path} must be a {_type_name(kind)}, got {value!r}.")
        if project and name in USER_ONLY:
            why = USER_ONLY_WHY.get(name, "choose where your key goes")
            layers.notices.append(f"Ignored {name} in {path}: only your own config can {why}.")
            continue
        if project and name == "permission_mode" and value not in PROJECT_MODES:
            layers.notices.append(
                f"Ignored permission_mode = {value!r} in {path}: a project's config can only choose "
                f"{' or '.join(PROJECT_MODES)}."
            )
            continue
        if project and name == "permission_mode" and layers.values.get(name) == "plan" and value != "plan":
            layers.notices.append(
                f"Ignored permission_mode = {value!r} in {path}: your own config chose plan, which a project's "
                "cannot loosen."
            )
            continue
        layers.put(name, value, str(path))


def _apply_env(layers: _Layers, env: Mapping[str, str]) -> None:
    for name, variable in ENV_TEXT.items():
        if env.get(variable):
            layers.put(name, env[variable], f"env {variable}")
    for name, (variable, kind) in ENV_NUMBERS.items():
        if env.get(variable):
            try:
                layers.put(name, kind(env[variable]), f"env {variable}")
            except ValueError:
                raise ConfigError(f"{variable} must be a number, got {env[variable]!r}.") from None


def _credentials(env: Mapping[str, str], preset: Preset | None, key_variable: object) -> tuple[dict, str | None]:
    """The key and how to send it; a provider's key comes only from its own variable, never from another's."""
    if key_variable:
        variable = str(key_variable)
        bearer = preset.bearer if preset else False
    elif preset is not None:
        variable, bearer = preset.key_variable, preset.bearer
    else:
        if env.get("ANTHROPIC_API_KEY"):
            return {"api_key": env["ANTHROPIC_API_KEY"], "auth_token": env.get("ANTHROPIC_AUTH_TOKEN") or None}, (
                "ANTHROPIC_API_KEY"
            )
        if env.get("ANTHROPIC_AUTH_TOKEN"):
            return {"auth_token": env["ANTHROPIC_AUTH_TOKEN"]}, "ANTHROPIC_AUTH_TOKEN"
        return {}, None
    value = env.get(variable) or (preset.placeholder_key if preset else None)
    if not value:
        return {}, None
    used = variable if env.get(variable) else None
    return ({"auth_token": value} if bearer else {"api_key": value}), used


def _preset(name: str, source: str) -> Preset:
    if name not in PRESETS:
        raise ConfigError(f"Unknown provider {name!r} ({source}); use one of {', '.join(PRESETS)}.")
    return PRESETS[name]


def _type_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "whole number", float: "number", str: "string", bool: "true or false"}
    return " or ".join(names[k] for k in kinds)


def from_environment(env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Settings from the environment, then explicit overrides (flags) where given; no config file is read."""
    return resolve(env, overrides, files=False).settings
