"""The policy for MCP tools (`mcp__<server>__<tool>`): rules name a tool exactly, a whole server
(`mcp__github` or `mcp__github__*`) or any glob of names; without a rule, a tool asks in default mode unless
it was marked read-only (readOnlyHint from a server of the user's own config), runs in auto mode, and is
refused in plan mode. Pure code."""

from __future__ import annotations

import fnmatch

from mini_agent.safety.decisions import SESSION, Allow, Ask, Deny, Grant, Mode, ToolCall, Verdict
from mini_agent.safety.refusals import plan_refusal
from mini_agent.safety.rules import Effect, Rule, Rules

PREFIX = "mcp__"


def is_mcp(name: str) -> bool:
    return name.startswith(PREFIX)


def matches(rule: Rule, name: str) -> bool:
    """Whether a rule's tool names this MCP tool: exactly, as its server, or as a glob."""
    if not is_mcp(rule.tool):
        return False
    if "*" in rule.tool or "?" in rule.tool:
        return fnmatch.fnmatchcase(name, rule.tool)
    return name == rule.tool or name.startswith(rule.tool + "__")


def _first(rules: Rules, effect: Effect, name: str) -> Rule | None:
    return next((rule for rule in rules.rules if rule.effect == effect and matches(rule, name)), None)


def check_mcp(call: ToolCall, mode: Mode, rules: Rules) -> Verdict:
    name = call.name
    denied = _first(rules, "deny", name)
    if denied:
        return Deny(f"Not run: {name} is denied by the rule {denied}.")
    if mode == "bypass":
        return Allow("bypass mode runs everything")
    server = name.split("__")[1]
    grants = (
        Grant("t", f"always allow {name}", (Rule("allow", name, None, SESSION),)),
        Grant(
            "s",
            f"always allow every tool of the MCP server {server}",
            (Rule("allow", f"mcp__{server}", None, SESSION),),
        ),
    )
    asked = _first(rules, "ask", name)
    if asked:
        return Ask(f"the rule {asked} asks first", "ordinary", grants)
    allowed = _first(rules, "allow", name)
    if allowed:
        return Allow(f"allowed by {allowed}")
    if call.risk == "read":
        return Allow(f"{name} only reads (its server says so)")
    if mode == "plan":
        return plan_refusal(name, ": MCP tools may change things", f"{name} may change things")
    if mode == "auto":
        return Allow("auto mode runs MCP tools")
    return Ask(f"{name} is a tool of the MCP server {server}: it may change things", "ordinary", grants)
