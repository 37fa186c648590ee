"""A `[[hooks.<Event>]]` table for a config file, and the user's config that holds it; a hook as the settings hold
one, and a command that records each event it gets."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from mini_agent.hooks import HookDef


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


def hook_def(event: str, command: str, matcher: str | None = None, timeout: float = 60.0) -> HookDef:
    return HookDef(event, command, matcher, timeout, "user", "test")


def recording(log: Path, then: str = "") -> str:
    """A hook command that appends the event it gets (one JSON line) to `log`, then runs `then`."""
    return f"cat >> {shlex.quote(str(log))}" + (f"; {then}" if then else "")


def events_in(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
