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
from mini_agent.safety.rules import Origin, Rules, parse_rules
from mini_agent.settings import (
    Settings,
    check_settings,
    declared,
    default_data_dir,
    default_user_dir,
    mode_named,
    secret_values,
)

DECLARED = dict(declared())
_KINDS: dict[str, type] = {
    "str": str,
    "str | None": str,
    "PermissionMode": str,
    "bool": bool,
    "int": int,
    "int | None": int,
    "float": float,
}
"""The annotations a setting with a flag, variable or key may have, and the type each reads as."""


def _kind(name: str) -> type:
    """The type a setting's annotation names; a float setting also takes a whole number from a file."""
    return _KINDS[Settings.__dataclass_fields__[name].type]  # type: ignore[index]


FILE_KEYS: dict[str, type | tuple[type, ...]] = {
    declaration.key: (int, float) if _kind(name) is float else _kind(name)
    for name, declaration in DECLARED.items()
    if declaration.key
}
"""Keys a config file may set, with the types each takes."""
KEY_FIELDS = {declaration.key: name for name, declaration in DECLARED.items() if declaration.key}
PROJECT_MODES = ("default", "plan")
"""A project's file may only make the mode stricter than the default."""


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

        from mini_agent.hooks.claude_settings import claude_project_hooks

        claude_hooks, left_out = claude_project_hooks(cwd)  # Claude Code's, a project's: trusted like ours
        hooks = configured_hooks(user_data, user_path, project_data, project_path) + claude_hooks
        layers.notices.extend(left_out)
    _apply_env(layers, env)
    for name, value in _provider_first((flags or {}).items()):
        if value is not None:
            flag = DECLARED[name].flag if name in DECLARED else None
            layers.put(name, value, flag or f"--{name.replace('_', '-')}")
    for effect, entries in (("allow", allow), ("deny", deny)):
        origin = Origin("flag", f"--{effect}")
        rules += Rules(tuple(rule for entry in entries for rule in parse_rules(entry, effect, origin)))

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
    key_variable = layers.values.get("api_key_variable")
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
    for key, value in _provider_first(data.items()):
        if key in ("permissions", "mcp_servers", "hooks"):
            continue
        if key not in FILE_KEYS:
            known = ", ".join(sorted(FILE_KEYS))
            raise ConfigError(
                f"Unknown setting {key!r} in {path}; the settings are: {known}, [permissions], [mcp_servers], "
                "[[hooks.<Event>]]."
            )
        kind, name = FILE_KEYS[key], KEY_FIELDS[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise ConfigError(f"{key} in {path} must be a {_type_name(kind)}, got {value!r}.")
        if project and DECLARED[name].user_only:
            layers.notices.append(f"Ignored {key} in {path}: only your own config can {DECLARED[name].user_only}.")
            continue
        if name == "permission_mode":
            value = mode_named(value)
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
    for name, declaration in _provider_first(DECLARED.items()):
        variable = declaration.env
        if variable and env.get(variable):
            layers.put(name, _from_text(_kind(name), variable, env[variable]), f"env {variable}")


def _from_text(kind: type, variable: str, text: str) -> object:
    if kind is bool:  # bool("0") is True
        if text.strip().lower() not in ("1", "true", "0", "false"):
            raise ConfigError(f"{variable} must be 1 or 0, got {text!r}.")
        return text.strip().lower() in ("1", "true")
    try:
        return kind(text)
    except ValueError:
        raise ConfigError(f"{variable} must be a number, got {text!r}.") from None


def _provider_first(items):
    """The provider before the rest of a layer: its preset is the base that the layer's own model or base_url
    refine."""
    return sorted(items, key=lambda item: item[0] != "provider")


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
