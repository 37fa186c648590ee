"""Which project MCP servers the human trusted: a JSON file under the user's data directory, keyed by the
project (the file that defines the server), the server's name and the hash of its definition, so a changed
command or URL asks again. The user's own servers need no trust."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from mini_agent.mcp.servers import ServerDef

TRUST_FILE = "mcp-trust.json"


class TrustStore:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / TRUST_FILE
        self._lock = threading.Lock()

    def trusted(self, server: ServerDef) -> bool:
        if server.origin == "user":
            return True
        return self._read().get(server.source, {}).get(server.name) == server.digest()

    def trust(self, server: ServerDef) -> None:
        """Remember the human's yes for this exact definition."""
        import tempfile

        with self._lock:
            data = self._read()
            data.setdefault(server.source, {})[server.name] = server.digest()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Written whole and renamed: two agents starting at once must not leave half a file.
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".mcp-trust-")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(data, stream, indent=1, sort_keys=True)
            os.replace(temporary, self.path)

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}
