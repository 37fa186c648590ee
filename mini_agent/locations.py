"""Where mini-agent keeps the user's things: config, data and cache directories, from MINI_AGENT_HOME or the XDG
variables. Imports only `os` (not even collections.abc, ~4 ms): the command's first steps (entry.py,
cli/help_text.py) read them before anything else."""

from __future__ import annotations

import os

APP = "mini-agent"


def user_dir(env: dict[str, str] | os._Environ[str]) -> str:
    """Config: config.toml, commands/, agents/ ($XDG_CONFIG_HOME/mini-agent)."""
    return _under(env, "XDG_CONFIG_HOME", ".config")


def data_dir(env: dict[str, str] | os._Environ[str]) -> str:
    """Data: sessions, undo snapshots, trust ($XDG_DATA_HOME/mini-agent)."""
    return _under(env, "XDG_DATA_HOME", os.path.join(".local", "share"))


def cache_dir(env: dict[str, str] | os._Environ[str]) -> str:
    """Cache: what can be rebuilt, e.g. the rendered --help ($XDG_CACHE_HOME/mini-agent, or MINI_AGENT_HOME/cache)."""
    if env.get("MINI_AGENT_HOME"):
        return os.path.join(os.path.expanduser(env["MINI_AGENT_HOME"]), "cache")
    return _under(env, "XDG_CACHE_HOME", ".cache")


def _under(env: dict[str, str] | os._Environ[str], variable: str, default: str) -> str:
    if env.get("MINI_AGENT_HOME"):  # one directory for everything (tests, portable set-ups)
        return os.path.expanduser(env["MINI_AGENT_HOME"])
    return os.path.join(env.get(variable) or os.path.join(os.path.expanduser("~"), default), APP)
