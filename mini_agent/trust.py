"""What the human trusted of a project: its MCP servers and its hooks run commands as the user, so each runs only
after a yes. Remembered in a JSON file under the user's data directory, keyed by the file that defines the thing,
its name and the hash of its definition, so a changed command or URL asks again. The user's own need no trust."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Protocol

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


class TrustStore:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / TRUST_FILE
        self._lock = threading.Lock()

    def trusted(self, thing: Trusted) -> bool:
        if thing.origin == "user":
            return True
        return self._read().get(thing.source, {}).get(thing.name) == thing.digest()

    def trust(self, thing: Trusted) -> None:
        """Remember the human's yes for this exact definition."""
        import tempfile

        with self._lock:
            data = self._read()
            data.setdefault(thing.source, {})[thing.name] = thing.digest()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Written whole and renamed: two agents starting at once must not leave half a file.
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(data, stream, indent=1, sort_keys=True)
            os.replace(temporary, self.path)

    def _read(self) -> dict[str, dict[str, str]]:
        for path in (self.path, self.path.with_name(EARLIER_FILE)):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except FileNotFoundError:
                continue
            except (OSError, ValueError):
                return {}
            return data if isinstance(data, dict) else {}
        return {}
