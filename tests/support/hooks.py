"""A `[[hooks.<Event>]]` table for a config file."""

from __future__ import annotations

import json


def hook(event: str, command: str, matcher: str | None = None, timeout: float | None = None) -> str:
    lines = [f"[[hooks.{event}]]", f"command = {json.dumps(command)}"]
    if matcher is not None:
        lines.append(f"matcher = {json.dumps(matcher)}")
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    return "\n".join(lines) + "\n"
