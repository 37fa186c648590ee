"""`mini-agent permissions` and `mini-agent check-command`: the policy, shown to a human or a script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from mini_agent.safety.permissions import Allow, Ask, Deny, ToolCall, check
from mini_agent.safety.workspace import Workspace
from mini_agent.settings import Settings
from mini_agent.tools import BASH
from mini_agent.ui.terminal_text import VisibleWriter

PROTECTIONS = (
    "read-only shell commands (a curated list with argument checks) run in every mode, in the read-only sandbox",
    "commands that run without your yes (auto mode, wildcard rules) run in the workspace-write sandbox: writes "
    "only in the project and temp dirs, no credentials, no network unless your own rule names the command",
    "only your yes, an exact rule of yours or bypass runs a command outside the sandbox",
    "destructive shell commands ask in every mode but bypass; without a terminal they are refused",
    "writes outside the working directory or to protected places (.git internals, ~/.ssh, shell start-up "
    "files, /etc, the agent's config) ask in every mode but bypass",
    "reading likely secrets asks unless the mode is auto; credentials outside the project (~/.ssh, ~/.aws, "
    "~/.netrc, shell histories, the agent's own data, another .env, ...) ask in auto too",
    "a call that would send a known secret (the API key, secret variables, values from .env and credential "
    "files, URL passwords seen in output, in any encoding) to the network or an MCP server asks in every mode "
    "but bypass, whatever the rules allow",
    "web_fetch to loopback, private, link-local or metadata addresses asks (checked after DNS and on redirects)",
    "only rules from your own config, flags or your answers can open these; a project's config cannot",
    "a project's allow rules and its commands' allowed-tools are obeyed only once you trusted exactly those "
    "rules (asked at start on a terminal; a change asks again)",
    "mini-agent's own installation (its virtualenv, site-packages) is read-only to commands when it is inside "
    "the project (bubblewrap), and writes there ask",
)


def print_rules(settings: Settings, as_json: bool, out: TextIO) -> None:
    from mini_agent.app.rules_setup import untrusted

    rules = settings.rules.rules
    waiting = untrusted(settings)
    files = [{"path": str(path), "exists": Path(path).is_file()} for path in settings.config_files]
    if as_json:
        record = {
            "mode": settings.permission_mode,
            "rules": [
                {"effect": rule.effect, "rule": rule.text, "source": rule.origin.kind, "where": rule.origin.detail}
                | ({"trusted": False} if rule in waiting else {})
                for rule in rules
            ],
            "config_files": files,
            "protections": list(PROTECTIONS),
        }
        out.write(json.dumps(record, indent=2) + "\n")
        return
    out = VisibleWriter(out)  # rules come from files in the project
    out.write(f"Permission mode: {settings.permission_mode}\n\n")
    if rules:
        out.write("Rules (deny beats ask beats allow):\n")
        width = max(len(rule.text) for rule in rules)
        for rule in rules:
            note = "  (not trusted yet: asked at the next start)" if rule in waiting else ""
            out.write(f"  {rule.effect:<5}  {rule.text:<{width}}  {rule.origin}{note}\n")
    else:
        out.write("No rules: the mode's defaults apply.\n")
    out.write("\nConfig files:\n")
    for file in files:
        out.write(f"  {file['path']}{'' if file['exists'] else '  (not present)'}\n")
    out.write("\nAlways:\n")
    for line in PROTECTIONS:
        out.write(f"  - {line}\n")


def print_command_check(settings: Settings, command: str, as_json: bool, out: TextIO) -> None:
    from mini_agent.app.rules_setup import as_obeyed
    from mini_agent.safety.shell import classify

    settings = as_obeyed(settings)  # a project's untrusted allow rules decide nothing
    workspace = Workspace.at(settings.cwd, config_files=settings.config_files, private=settings.private_dirs)
    verdict = classify(command, workspace)
    mode = settings.permission_mode
    sandboxed = _sandbox_present()
    decision = check(ToolCall(BASH, "exec", {"command": command}), mode, settings.rules, workspace, sandboxed)
    if mode != "bypass":  # as the gate does: a command that would send a secret asks
        from mini_agent.safety.egress import guard

        settings.secret_set.refresh()
        decision = guard(decision, BASH, {"command": command}, settings.secret_set)
    name, reason = _outcome(decision)
    where = _where(decision)
    if as_json:
        record = {
            "command": command,
            "mode": mode,
            "decision": name,
            "reason": reason,
            "sandbox": where,
            "class": verdict.kind,
            "class_reason": verdict.reason,
            "parsed": verdict.parsed,
            "parts": [{"command": part.text, "class": part.kind, "reason": part.reason} for part in verdict.parts],
        }
        if isinstance(decision, Ask):
            record["allow_with"] = [rule.text for grant in decision.grants[:1] for rule in grant.rules]
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        return
    out = VisibleWriter(out)  # the command explained
    out.write(f"decision: {name} (mode {mode})\n")
    out.write(f"class:    {verdict.kind}{'' if verdict.parsed else ' (could not be fully parsed)'}\n")
    out.write(f"reason:   {reason}\n")
    if where is not None:
        out.write(f"sandbox:  {where}\n")
    if len(verdict.parts) > 1:
        out.write("parts:\n")
        for part in verdict.parts:
            out.write(f"  {part.kind:<11} {part.text}  ({part.reason})\n")


def _sandbox_present() -> bool:
    from mini_agent.safety.sandbox import mechanism

    return mechanism() is not None


def _where(decision) -> str | None:
    """Where an allowed command runs: "read-only" or "workspace-write" (with "+network"), or "none" (outside)."""
    if not isinstance(decision, Allow):
        return None
    return decision.sandbox + ("+network" if decision.network and decision.sandbox != "none" else "")


def _outcome(decision) -> tuple[str, str]:
    if isinstance(decision, Allow):
        return "allow", decision.reason
    if isinstance(decision, Deny):
        return "deny", decision.message
    return "ask", decision.reason
