"""A `[[hooks.<Event>]]` table for a config file, and the user's config that holds it."""

from __future__ import annotations

import json
from pathlib import Path


def hook(event: str, command: str, matcher: str | None = None, timeout: float | None = None) -> str:
    lines = [f"[[hooks.{event}]]", f"command = {json.dumps(command)}"]
    if matcher is not None:
        lines.append(f"matcher = {json.dumps(matcher)}")
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    return "\n".join(lines) + "\n"


def user_config(tmp_path: Path, text: str) -> None:
    home = tmp_path / "mini-agent-home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(text)
