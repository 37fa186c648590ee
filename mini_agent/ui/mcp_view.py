"""`/mcp`: each MCP server with its status, its tools and its last error (header values masked)."""

from __future__ import annotations


def status_lines(manager) -> list[str]:
    if manager is None:
        return ["No MCP servers configured. `mini-agent mcp add NAME -- COMMAND ARGS...` adds one."]
    lines = []
    for row in manager.status():
        lines.append(f"{row.name}  {row.status}  {row.summary}  ({row.origin}: {row.source})")
        if row.error:
            lines.append(f"  error: {row.error}")
        if row.tools:
            lines.append(f"  tools: {', '.join(row.tools)}")
    return lines
