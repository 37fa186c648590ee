"""What a remote endpoint said about itself (discovery.py), remembered between runs for a day.

Asking costs a round trip or more before the first request can be sized (an endpoint of unknown make is asked in
five ways), and a warm start has nothing else to do meanwhile. A remote endpoint's window and model list change
rarely; a local server's (llama.cpp, vLLM, Ollama on loopback) change with every restart and cost a millisecond
to ask, so those are never remembered. The file sits in the cache directory, which confined commands cannot see
or write; what it holds is checked as untrusted input all the same (a wrong entry is dropped, never obeyed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from mini_agent.model.discovery import Discovery

KEPT_FOR = 24 * 3600.0
"""Seconds an answer is used before the endpoint is asked again."""
MOST_ENTRIES = 64
"""Entries kept in the file; the oldest go first."""


class EndpointMemory:
    """Remembered discoveries in one JSON file, keyed by base URL and model (never by key or account)."""

    def __init__(self, path: Path, clock=time.time, remembers=None) -> None:
        self.path = path
        self._clock = clock
        self._remembers = remembers or (lambda base_url: not _local(base_url))
        """Which endpoints' answers are kept: remote ones (tests, whose endpoint is on loopback, say others)."""

    def recall(self, base_url: str, model: str | None) -> Discovery | None:
        """The endpoint's answer from an earlier run if it is remote, fresh and well-formed, else None."""
        if not self._remembers(base_url):
            return None
        entry = self._entries().get(_key(base_url, model))
        if not isinstance(entry, dict):
            return None
        saved = entry.get("saved")
        if not isinstance(saved, (int, float)) or not 0 <= self._clock() - saved < KEPT_FOR:
            return None
        return _discovery(entry)

    def keep(self, base_url: str, model: str | None, found: Discovery) -> None:
        """Remember what a remote endpoint said, if it said anything; a failure to write only costs the saving."""
        if not self._remembers(base_url) or not (found.window or found.models or found.capabilities):
            return
        entry = {
            "saved": self._clock(),
            "window": found.window,
            "source": found.source,
            "shared": found.shared,
            "models": found.models[:200],
            "capabilities": found.capabilities,
            "notices": found.notices,
        }

        def change(text: str) -> str:
            entries = _parsed(text)
            entries.pop(_key(base_url, model), None)
            entries[_key(base_url, model)] = entry
            kept = dict(list(entries.items())[-MOST_ENTRIES:])
            return json.dumps(kept, indent=1) + "\n"

        from mini_agent.files.update import update_text

        try:
            update_text(self.path, change)
        except Exception:  # a read-only or full cache directory: next run asks again
            pass

    def _entries(self) -> dict:
        try:
            return _parsed(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            return {}


def _key(base_url: str, model: str | None) -> str:
    return f"{base_url.rstrip('/')} {model or ''}"


def _parsed(text: str) -> dict:
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _discovery(entry: dict) -> Discovery | None:
    window, source, models = entry.get("window"), entry.get("source"), entry.get("models")
    capabilities, notices = entry.get("capabilities"), entry.get("notices")
    if window is not None and not (isinstance(window, int) and not isinstance(window, bool) and window > 0):
        return None
    if not (
        isinstance(source, (str, type(None)))
        and isinstance(entry.get("shared"), bool)
        and isinstance(models, list)
        and all(isinstance(model, str) for model in models)
        and isinstance(capabilities, (dict, type(None)))
        and isinstance(notices, list)
        and all(isinstance(notice, str) for notice in notices)
    ):
        return None
    from mini_agent.model.discovery import Discovery  # with the first remembered answer, not at start-up

    return Discovery(
        window=window,
        source=f"{source}, remembered" if source else None,
        shared=entry["shared"],
        models=list(models),
        notices=list(notices),
        capabilities=capabilities,
    )


def _local(base_url: str) -> bool:
    """Whether the endpoint is on this machine (its answers change with a restart and cost nothing to ask)."""
    try:
        host = (urlsplit(base_url).hostname or "").lower()
    except ValueError:
        return True  # not a URL one can remember by
    if host in ("localhost", "") or host.endswith(".localhost"):
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
