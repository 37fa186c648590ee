"""A project's allow rules at start-up and a project command's allowed-tools at use: obeyed only once the human
trusted exactly these rules (the trust file of MCP servers and hooks). A repository, or a command the agent ran,
can write `.mini-agent/config.toml` or `.claude/commands/*.md`; what they allow waits for a yes on the terminal,
and without a terminal is left out with a notice naming the flag. Deny and ask rules are obeyed untrusted."""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import TextIO

from mini_agent.commands.files import CommandFile
from mini_agent.safety.rules import Rules
from mini_agent.settings import Settings
from mini_agent.trust import COMMAND_RULES, ProjectRules, TrustStore, project_rules
from mini_agent.ui.trust_question import ask_to_trust, not_trusted_why

TRUST_FLAG = "--trust-project-rules"
TRUST_KEY = "trust_project_rules = true"
ALLOWS = "Calls they name run without asking you."


def prepare(settings: Settings, can_ask: bool, err: TextIO | None = None) -> Settings:
    """The settings with each untrusted project file's allow rules left out (asked about first, on a terminal)."""
    err = err or sys.stderr
    dropped: list = []
    for group in project_rules(settings.rules.rules):
        if not _obeyed(group, settings, can_ask, err, f"The project's config ({group.source}) allows:"):
            dropped += group.rules
            print(f"mini-agent: the allow rules of {group.source} are not obeyed: {_why(can_ask)}.", file=err)
    return _without(settings, dropped)


def untrusted(settings: Settings) -> list:
    """The project allow rules a run would leave out unless the human trusts them now (for `permissions`)."""
    if settings.trust_project_rules:
        return []
    store = TrustStore(settings.data_dir)
    return [rule for group in project_rules(settings.rules.rules) if not store.trusted(group) for rule in group.rules]


def as_obeyed(settings: Settings) -> Settings:
    """The settings as a run without a terminal obeys them, asking nobody (for `check-command`)."""
    return _without(settings, untrusted(settings))


def _without(settings: Settings, dropped: list) -> Settings:
    if not dropped:
        return settings
    return replace(settings, rules=Rules(tuple(rule for rule in settings.rules.rules if rule not in dropped)))


def command_rules(command: CommandFile, settings: Settings, can_ask: bool, err: TextIO | None = None) -> CommandFile:
    """A project command as it may run: its allowed-tools only once trusted, else the prompt alone."""
    if command.scope != "project" or not command.rules.rules:
        return command
    err = err or sys.stderr
    group = ProjectRules(str(command.path), COMMAND_RULES, command.rules.rules)
    if _obeyed(group, settings, can_ask, err, f"The project's command {command.name} ({command.path}) allows:"):
        return command
    print(f"mini-agent: the allowed-tools of {command.path} are not obeyed: {_why(can_ask)}.", file=err)
    return replace(command, rules=Rules())


def _obeyed(group: ProjectRules, settings: Settings, can_ask: bool, err: TextIO, heading: str) -> bool:
    store = TrustStore(settings.data_dir)
    if settings.trust_project_rules or store.trusted(group):
        return True
    lines = [rule.text for rule in group.rules]
    if can_ask and ask_to_trust(err, heading, lines, "Trust these rules?", ALLOWS):
        store.trust(group)
        return True
    return False


def _why(can_ask: bool) -> str:
    return not_trusted_why(can_ask, TRUST_FLAG, TRUST_KEY)
