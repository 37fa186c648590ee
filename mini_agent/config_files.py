"""The configuration files: one per user, one per project (TOML), read once at start-up.

~/.config/mini-agent/config.toml        (MINI_AGENT_HOME or $XDG_CONFIG_HOME/mini-agent)
<project>/.mini-agent/config.toml       (the nearest one from the working directory up to the repository root)

[permissions]
allow = ["bash(npm test)", "bash(git log *)", "edit_file(src/**)"]
ask   = ["bash(git push *)"]
deny  = ["web_fetch(*.internal.example.com)", "read_file(secrets/**)"]
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from mini_agent.errors import ConfigError
from mini_agent.safety.rules import EFFECTS, Origin, Rule, Rules, parse_rules
from mini_agent.safety.workspace import project_dirs

CONFIG_NAME = "config.toml"
PROJECT_DIR = ".mini-agent"


def user_config(user_dir: Path) -> Path:
    return user_dir / CONFIG_NAME


def project_config(cwd: Path) -> Path | None:
    """The nearest project config from the working directory up to the repository root."""
    for directory in project_dirs(cwd):
        candidate = directory / PROJECT_DIR / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def read_toml(path: Path) -> dict:
    """A config file's contents; {} when it does not exist; a ConfigError naming the file when it is broken."""
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}; fix that line or move the file away.") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path} is not UTF-8 text (byte {exc.start} is {exc.object[exc.start]:#04x}); save it as UTF-8."
        ) from None
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from None


def rules_in(data: dict, origin: Origin) -> Rules:
    """The [permissions] table of one config file as rules."""
    table = data.get("permissions", {})
    if not isinstance(table, dict):
        raise ConfigError(f"[permissions] in {origin.detail} must be a table with allow, ask and deny lists.")
    unknown = sorted(set(table) - set(EFFECTS))
    if unknown:
        raise ConfigError(f"Unknown key {unknown[0]!r} in [permissions] of {origin.detail}; use allow, ask and deny.")
    rules: list[Rule] = []
    for effect in EFFECTS:
        entries = table.get(effect, [])
        if isinstance(entries, str):
            entries = [entries]
        if not isinstance(entries, list) or not all(isinstance(entry, str) for entry in entries):
            raise ConfigError(f"permissions.{effect} in {origin.detail} must be a list of strings.")
        for entry in entries:
            rules.extend(parse_rules(entry, effect, origin))
    return Rules(tuple(rules))
