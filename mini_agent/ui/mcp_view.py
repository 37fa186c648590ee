"""`/mcp`: each MCP server with its status (and why it failed), what it offers (tools, resources, prompts) and
its last error (header values masked)."""

from __future__ import annotations

from mini_agent.mcp.prompts import command_name

ADVICE = {
    "untrusted": "a project server you did not trust: not started",
    "late": "still starting: its tools join when it is ready",
    "needs-auth": "needs authentication",
}
"""A line under a status that needs one."""


def status_lines(manager) -> list[str]:
    if manager is None:
        return ["No MCP servers configured. `mini-agent mcp add NAME -- COMMAND ARGS...` adds one."]
    lines = []
    for row in manager.status():
        lines.append(f"{row.name}  {row.status}  {row.summary}  ({row.origin}: {row.source})")
        if row.status == "ready":
            lines.append(f"  offers {_counts(row)}")
        elif row.status in ADVICE:
            lines.append(f"  {ADVICE[row.status]}")
        if row.error:
            lines.append(f"  error: {row.error}")
        if row.tools:
            lines.append(f"  tools: {', '.join(row.tools)}")
        if row.prompts:
            lines.append(f"  prompts: {', '.join(command_name(row.name, prompt) for prompt in row.prompts)}")
    if any(row.status != "ready" for row in manager.status()):
        lines.append("/mcp reconnect NAME starts a server again (/mcp reconnect: every server not connected).")
    return lines


def _counts(row) -> str:
    counts = [(len(row.tools), "tool"), (row.resources, "resource"), (len(row.prompts), "prompt")]
    return ", ".join(f"{count} {word}{'s' if count != 1 else ''}" for count, word in counts)
