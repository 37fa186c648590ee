"""Claude Code's cheap views, as REPL commands: /status, /config, /permissions, /doctor.

Each shows what is already known or asked for elsewhere (`mini-agent config`, `mini-agent permissions`,
`mini-agent sandbox`, /mcp), for the session in use: its model and mode as switched since the start.
"""

from __future__ import annotations

import io
import socket
from dataclasses import fields, replace
from urllib.parse import urlsplit

from mini_agent.settings import Setting
from mini_agent.ui.terminal_text import visible

CONNECT_TIMEOUT = 3.0
"""Seconds /doctor waits for the endpoint to accept a connection."""


def status(repl, argument: str) -> None:
    agent = repl.agent
    settings = agent.settings
    for name, value in (
        ("model", settings.model),
        ("endpoint", settings.base_url),
        ("mode", agent.mode),
        ("session", repl.sessions.session_id or "(none yet)"),
        ("cwd", str(agent.ctx.cwd)),
        ("sandbox", _sandbox()[1]),
    ):
        _say(repl, f"{name:<9} {value}")


def config(repl, argument: str) -> None:
    """The effective settings of the session; `mini-agent config` adds where each came from."""
    settings = repl.agent.settings
    rows = [
        (item.name, getattr(settings, item.name), item.metadata.get("setting", Setting()))
        for item in fields(settings)
        if item.metadata.get("setting", Setting()).shown
    ]
    width = max(len(name) for name, _, _ in rows)
    for name, value, declaration in rows:
        shown = declaration.unset if declaration.unset and not value else "(none)" if value is None else value
        _say(repl, f"{name:<{width}}  {shown}")
    repl.console.print("Where each value comes from: mini-agent config", style="dim", markup=False)


def permissions(repl, argument: str) -> None:
    from mini_agent.app.permissions_view import print_rules

    text = io.StringIO()
    print_rules(replace(repl.agent.settings, permission_mode=repl.agent.mode), False, text)
    for line in text.getvalue().splitlines():
        _say(repl, line)


def doctor(repl, argument: str) -> None:
    """A short health check: the key, the endpoint, the sandbox, the MCP servers."""
    from rich.text import Text

    agent = repl.agent
    settings = agent.settings
    key = bool(settings.api_key or settings.auth_token)
    checks = [("key", key, "set" if key else "not set: export ANTHROPIC_API_KEY (or your provider's variable)")]
    checks.append(("endpoint", *_endpoint(agent.provider, settings.base_url)))
    checks.append(("sandbox", *_sandbox()))
    rows = agent.mcp.status() if agent.mcp is not None else []
    for row in rows:
        checks.append((f"mcp {row.name}", row.status == "ready", row.status + (f": {row.error}" if row.error else "")))
    if not rows:
        checks.append(("mcp", True, "no servers configured"))
    ascii_only = not (repl.console.encoding or "").lower().replace("-", "").startswith("utf")
    for name, fine, text in checks:
        mark = ("ok" if fine else "!!") if ascii_only else ("✓" if fine else "✗")
        repl.console.print(Text.assemble((mark, "green" if fine else "red"), " ", visible(f"{name}: {text}")))


def _say(repl, line: str) -> None:
    """A line of someone else's text (settings, paths, errors): control characters named, no markup read, and
    left to the terminal to wrap, so a long path is never broken into pieces a copy would keep."""
    repl.console.print(visible(line), markup=False, highlight=False, soft_wrap=True)


def _endpoint(provider, base_url: str) -> tuple[bool, str]:
    models = provider.list_models()
    if models:
        return True, f"{base_url} answers; it lists {len(models)} model(s)"
    address = urlsplit(base_url)
    port = address.port or (443 if address.scheme == "https" else 80)
    try:
        with socket.create_connection((address.hostname or "", port), timeout=CONNECT_TIMEOUT):
            return True, f"{base_url} accepts connections (it lists no models)"
    except OSError as exc:
        return False, f"{base_url} cannot be reached: {exc.strerror or exc}"


def _sandbox() -> tuple[bool, str]:
    from mini_agent.safety.sandbox import mechanism, unavailable_reason

    found = mechanism()
    if found is None:
        return False, f"none ({unavailable_reason()}): commands are not confined; the permission policy keeps asking"
    return True, f"{found.name} ({found.detail})"
