"""Who may run what: permission modes and a first-cut destructive-command check. Pure code, no I/O.

The policy answers Allow, Deny (with a message for the model) or Ask (with the reason shown to the human).
Asking is the UI's job (ui/confirm.py); when nobody can be asked, the caller turns Ask into Deny.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mini_agent.settings import PermissionMode
    from mini_agent.tools.base import Tool


@dataclass(frozen=True)
class Allow:
    pass


@dataclass(frozen=True)
class Deny:
    message: str
    """Sent to the model as the tool_result, so it can adapt."""
    stop_turn: bool = False
    """End the turn instead of letting the model carry on (the human pressed Ctrl-C at the question)."""


@dataclass(frozen=True)
class Ask:
    reason: str


Decision = Allow | Deny
Verdict = Allow | Deny | Ask

# Commands that can destroy work or the machine. A first cut on the command text; the shell-parsing
# classifier replaces it. Erring towards asking is the safe direction.
_DESTRUCTIVE: list[tuple[str, str]] = [
    (r"\brm\s+(-\w*[rRf]\w*\s+|--recursive\b|--force\b)", "recursive or forced deletion"),
    (r"\b(mkfs(\.\w+)?|wipefs|shred)\b", "destroys file systems or file contents"),
    (r"\bdd\b.*\bof=", "dd writing to a file or device"),
    (r">\s*/dev/(sd|nvme|hd|vd|xvd|disk|mmcblk)", "writes to a block device"),
    (r"\b(chmod|chown|chgrp)\s+(-\w*R|--recursive)", "recursive permission or owner change"),
    (r":\(\)\s*\{.*:\s*\|\s*:.*\}", "fork bomb"),
    (r"\bkill\s+(-9\s+|-KILL\s+|-s\s+KILL\s+)?-1\b", "kills every process"),
    (r"\b(shutdown|reboot|halt|poweroff)\b|\binit\s+[06]\b", "shuts down or restarts the machine"),
    (r"(^|[;&|(]\s*)(sudo|su|doas)\b", "runs as another user"),
    (r"\b(curl|wget)\b[^|]*\|\s*(ba|z|da|k)?sh\b", "pipes a download into a shell"),
    (r"\bbase64\s+(-d|--decode)\b.*\|\s*(ba|z|da|k)?sh\b", "runs decoded, hidden commands"),
    (r"\bgit\s+push\b.*(\s-f\b|--force|\s\+\S)", "force-push rewrites remote history"),
    (r"\bgit\s+reset\s+.*--hard\b|\bgit\s+reset\s+--hard\b", "discards uncommitted work"),
    (r"\bgit\s+clean\s+-\w*f", "deletes untracked files"),
    (r"\bgit\s+(filter-branch|filter-repo)\b|\bgit\s+rebase\b", "rewrites history"),
    (r"\bgit\s+(checkout|restore)\s+(--\s+)?\.(\s|$)", "discards uncommitted changes"),
    (r"\b(eval|exec)\s+.*\$\(", "runs a command built at run time"),
]
_DESTRUCTIVE_RE = [(re.compile(pattern), reason) for pattern, reason in _DESTRUCTIVE]


def destructive_reason(command: str) -> str | None:
    """Why a shell command is destructive, or None if nothing destructive was recognised."""
    for pattern, reason in _DESTRUCTIVE_RE:
        if pattern.search(command):
            return reason
    return None


def check(tool: Tool, arguments: dict, mode: PermissionMode) -> Verdict:
    """The policy for one tool call in one mode."""
    if tool.risk == "read":
        return Allow()
    if mode == "plan":
        return Deny(
            f"Plan mode is read-only, so {tool.name} was not run. Investigate with read-only tools and "
            "present a plan; the user can rerun with --permission-mode default, accept-edits or auto to make changes."
        )
    if tool.name == "bash":
        reason = destructive_reason(str(arguments.get("command", "")))
        if reason:
            return Ask(f"destructive command: {reason}")
        return Allow() if mode == "auto" else Ask("runs a shell command")
    if tool.risk == "write":
        return Allow() if mode in ("accept-edits", "auto") else Ask("changes a file")
    if tool.risk == "network":
        return Allow() if mode == "auto" else Ask("fetches a URL from the network")
    return Allow() if mode == "auto" else Ask(f"{tool.name} has side effects")


def refusal_without_human(tool: Tool, reason: str) -> Deny:
    """Ask turned into Deny when nobody can answer: say why and what would allow it."""
    if reason.startswith("destructive"):
        how = "Destructive commands need a human's yes: run mini-agent interactively to approve it."
    elif tool.risk == "write":
        how = "Rerun with --permission-mode accept-edits (or auto / --yes) to allow file changes."
    else:
        how = "Rerun with --permission-mode auto (or --yes) to allow it."
    return Deny(f"Not run: {tool.name} needs approval ({reason}) and this run is non-interactive. {how}")
