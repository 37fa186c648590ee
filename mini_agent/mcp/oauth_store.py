"""Where the OAuth tokens and client registrations of remote MCP servers are kept: one JSON file per server URL
in `<data dir>/mcp-oauth/` (a 0700 directory, each file 0600), written whole under the lock the config edits
use (files/update.py). The data dir is hidden from every sandboxed command.

`TokenFile` is the `mcp` SDK's `TokenStorage` for one server. Every token and client secret it reads or writes
joins the session's secrets (masked wherever the agent shows text, asked about before it goes out), and none is
ever put in an error message. Besides what the SDK asks it to keep, it keeps when the access token expires and
the authorization server's metadata the SDK discovered, so a later run refreshes at the right endpoint when the
token expires instead of sending a dead one.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from mini_agent.files.update import read_text, update_text

DIRECTORY = "mcp-oauth"


def token_path(data_dir: Path, url: str) -> Path:
    """The file of one server URL (a hash: URLs hold characters no file name may)."""
    return Path(data_dir) / DIRECTORY / f"{hashlib.sha256(url.encode()).hexdigest()[:32]}.json"


def private_directory(data_dir: Path) -> Path:
    """The token directory, made 0700 if it is not (and the data dir above it, if missing, private too)."""
    directory = Path(data_dir) / DIRECTORY
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    if directory.stat().st_mode & 0o077:
        os.chmod(directory, 0o700)
    return directory


def forget(data_dir: Path, url: str) -> bool:
    """Delete the tokens and registration of a server URL; False when there were none."""
    path = token_path(data_dir, url)
    if not path.exists():
        return False
    update_text(path, lambda before: "")  # under the lock: a run refreshing right now must not write it back
    path.unlink(missing_ok=True)
    return True


class TokenFile:
    """The SDK's TokenStorage for one server URL, backed by its file."""

    def __init__(self, data_dir: Path, url: str, server: str, secrets: Any = None) -> None:
        self.path = token_path(data_dir, url)
        self.data_dir = Path(data_dir)
        self.url = url
        self.server = server
        self.secrets = secrets
        self.context: Any = None
        """The provider's OAuthContext (set by the provider): what it discovered is kept with the tokens."""
        self._record = self._read()

    # ---- what the provider reads at start -------------------------------------------------------------------

    @property
    def expires_at(self) -> float | None:
        return self._record.get("expires_at")

    @property
    def discovered(self) -> dict:
        """{"oauth_metadata": ..., "protected_resource_metadata": ...}, as JSON, when a login found them."""
        return self._record.get("discovered") or {}

    # ---- TokenStorage ---------------------------------------------------------------------------------------

    async def get_tokens(self):
        from mcp.shared.auth import OAuthToken

        self._record = self._read()  # the SDK asks at its start and after a failed refresh: what is there now
        tokens = self._record.get("tokens")
        return OAuthToken.model_validate(tokens) if tokens else None

    async def set_tokens(self, tokens) -> None:
        self._learn(tokens.access_token, "OAuth access token")
        self._learn(tokens.refresh_token, "OAuth refresh token")
        expires_at = time.time() + int(tokens.expires_in) if tokens.expires_in is not None else None
        discovered = self._discovered()

        def change(record: dict) -> None:
            record["tokens"] = tokens.model_dump(mode="json", exclude_none=True)
            record["expires_at"] = expires_at
            if discovered:
                record["discovered"] = discovered

        self._update(change)

    async def get_client_info(self):
        from mcp.shared.auth import OAuthClientInformationFull

        client = self._record.get("client")
        return OAuthClientInformationFull.model_validate(client) if client else None

    async def set_client_info(self, client_info) -> None:
        self._learn(client_info.client_secret, "OAuth client secret")

        def change(record: dict) -> None:
            record["client"] = client_info.model_dump(mode="json", exclude_none=True)

        self._update(change)

    # ---- the file -------------------------------------------------------------------------------------------

    def _read(self) -> dict:
        record = _parse(read_text(self.path), self.url)
        tokens, client = record.get("tokens") or {}, record.get("client") or {}
        self._learn(tokens.get("access_token"), "OAuth access token")
        self._learn(tokens.get("refresh_token"), "OAuth refresh token")
        self._learn(client.get("client_secret"), "OAuth client secret")
        return record

    def _update(self, change) -> None:
        private_directory(self.data_dir)
        if self.path.exists() and self.path.stat().st_mode & 0o077:
            os.chmod(self.path, 0o600)  # the rename below keeps the old file's mode

        def rewrite(before: str) -> str:
            record = _parse(before, self.url)
            change(record)
            record["url"] = self.url
            self._record = record
            return json.dumps(record, indent=1, sort_keys=True) + "\n"

        update_text(self.path, rewrite)

    def _discovered(self) -> dict:
        context = self.context
        found = {}
        for name in ("oauth_metadata", "protected_resource_metadata"):
            value = getattr(context, name, None)
            if value is not None:
                found[name] = value.model_dump(mode="json", exclude_none=True)
        return found

    def _learn(self, value: str | None, what: str) -> None:
        if value and self.secrets is not None:
            self.secrets.add(value, f"the {what} of MCP server {self.server}", minimum=8)


def _parse(text: str, url: str) -> dict:
    """A file's record; {} for none, a damaged one, or one of another URL (a login starts over)."""
    try:
        record = json.loads(text) if text.strip() else {}
    except ValueError:
        return {}
    return record if isinstance(record, dict) and record.get("url") == url else {}
