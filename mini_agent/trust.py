"""What the human trusted of a project: its MCP servers and its hooks run commands as the user, and the allow rules
of its files (its config's [permissions] allow, its custom commands' allowed-tools) let calls run without a
question, so each is obeyed only after a yes. Remembered in a JSON file under the user's data directory, keyed by
the file that defines the thing, its name and the hash of its definition, so a changed command, URL or rule asks
again: whatever a command (or a cloned repository) planted there waits for the human. The user's own need no
trust."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

TRUST_FILE = "trust.json"
EARLIER_FILE = "mcp-trust.json"
"""Where trust was kept when only MCP servers needed it: still read, so nobody is asked again."""


class Trusted(Protocol):
    """Something a project defines that runs commands: an MCP server, the project's hooks."""

    origin: str
    """"user" (needs no trust) or "project"."""
    source: str
    """The file that defines it."""
    name: str

    def digest(self) -> str:
        """A hash of everything that decides what it runs."""


@dataclass(frozen=True)
class ProjectRules:
    """The allow rules one project file grants, as one thing to trust: any change to what they allow asks again
    (deny and ask rules only restrict, so they are obeyed untrusted and are not part of the hash)."""

    source: str
    name: str
    """ "[permissions] allow" for a config file, "allowed-tools" for a custom command."""
    rules: tuple[Any, ...]
    """`safety.rules.Rule`s, all `allow`."""
    origin: str = "project"

    def digest(self) -> str:
        written = sorted(rule.text for rule in self.rules)
        return hashlib.sha256(json.dumps(written).encode()).hexdigest()[:16]


CONFIG_RULES = "[permissions] allow"
COMMAND_RULES = "allowed-tools"


def project_rules(rules: Iterable[Any]) -> list[ProjectRules]:
    """The allow rules of each project file among `rules` (a config's), one group per file, in file order."""
    groups: dict[str, list[Any]] = {}
    for rule in rules:
        if rule.effect == "allow" and rule.origin.kind == "project":
            groups.setdefault(rule.origin.detail, []).append(rule)
    return [ProjectRules(source, CONFIG_RULES, tuple(found)) for source, found in groups.items()]


class TrustStore:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / TRUST_FILE
        self._lock = threading.Lock()

    def trusted(self, thing: Trusted) -> bool:
        if thing.origin == "user":
            return True
        return self._read().get(thing.source, {}).get(thing.name) == thing.digest()

    def trust(self, thing: Trusted) -> None:
        """Remember the human's yes for this exact definition. Locked across processes and written whole
        (file_update): two agents trusting at once each keep the other's answer."""
        from mini_agent.files.update import update_text

        def change(before: str) -> str:
            data = self._parsed(before) if before else self._read()  # the first write carries the older file over
            data.setdefault(thing.source, {})[thing.name] = thing.digest()
            return json.dumps(data, indent=1, sort_keys=True)

        with self._lock:
            update_text(self.path, change)

    def _read(self) -> dict[str, dict[str, str]]:
        for path in (self.path, self.path.with_name(EARLIER_FILE)):
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                continue
            except (OSError, ValueError):
                return {}
            return self._parsed(text)
        return {}

    @staticmethod
    def _parsed(text: str) -> dict[str, dict[str, str]]:
        """Trust as stored; anything unreadable trusts nothing (the human is asked again), never a crash."""
        try:
            data = json.loads(text)
        except ValueError:
            return {}
        if not isinstance(data, dict):
            return {}
        return {source: names for source, names in data.items() if isinstance(names, dict)}
