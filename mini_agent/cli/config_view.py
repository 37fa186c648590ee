"""`mini-agent config`: every effective setting, where it came from, the key masked."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import TextIO

from mini_agent.cli.config import Resolved
from mini_agent.settings import Setting, Settings
from mini_agent.ui.terminal_text import VisibleWriter


def print_config(resolved: Resolved, as_json: bool, out: TextIO) -> None:
    settings = resolved.settings
    rows = []
    for item in fields(settings):
        if not item.metadata.get("setting", Setting()).shown:
            continue
        value = getattr(settings, item.name)
        shown = str(value) if isinstance(value, Path) else value
        rows.append((item.name, shown, resolved.sources.get(item.name, "default")))
    key = _key_row(resolved)
    files = [{"path": str(path), "exists": path.is_file()} for path in settings.config_files]
    hooks = [{"hook": hook.summary(), "origin": hook.origin, "source": hook.source} for hook in settings.hooks]
    if as_json:
        record = {
            "settings": {name: {"value": value, "source": source} for name, value, source in rows},
            "key": key,
            "config_files": files,
            "hooks": hooks,
            "notices": list(resolved.notices),
        }
        out.write(json.dumps(record, indent=2, default=str) + "\n")
        return
    out = VisibleWriter(out)  # settings, hooks and paths come from files in the project
    width = max(len(name) for name, _, _ in rows)
    for name, value, source in rows:
        unset = _declaration(name).unset
        shown = unset if unset and not value else _text(value)
        out.write(f"{name:<{width}}  {shown}  ({source})\n")
    out.write(f"{'key':<{width}}  {key['shown']}  ({key['source']})\n")
    out.write("\nConfig files:\n")
    for file in files:
        out.write(f"  {file['path']}{'' if file['exists'] else '  (not present)'}\n")
    if hooks:
        out.write("\nHooks:\n")
    for hook in hooks:
        out.write(f"  {hook['hook']}  ({hook['origin']}: {hook['source']})\n")
    for notice in resolved.notices:
        out.write(f"! {notice}\n")


def _key_row(resolved: Resolved) -> dict:
    settings = resolved.settings
    value = settings.api_key or settings.auth_token
    how = "Authorization: Bearer"  # what the pinned SDK (2.x) sends for either kind of key
    if not value:
        return {"set": False, "shown": "not set", "source": "set ANTHROPIC_API_KEY or the provider's variable"}
    shown = f"**** ({len(value)} characters) as {how}"
    source = f"env {resolved.key_variable}" if resolved.key_variable else "provider placeholder"
    return {"set": True, "shown": shown, "source": source}


def _declaration(name: str) -> Setting:
    """How a field is shown; a field without a declaration (cwd, the directories) is shown plainly."""
    return Settings.__dataclass_fields__[name].metadata.get("setting", Setting())


def _text(value: object) -> str:
    return "(none)" if value is None else str(value)
