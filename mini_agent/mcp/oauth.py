"""OAuth for remote MCP servers (the MCP authorization spec), through the `mcp` SDK's `OAuthClientProvider`:
protected resource metadata, authorization server discovery, dynamic client registration, PKCE and resource
indicators are the SDK's; this module decides when they may run and where their requests may go.

- An ordinary connection never asks anyone: it sends the stored token (oauth_store.py), refreshes it when it
  has expired (by its recorded expiry, or once when the server answers 401 to it), and when the server still
  answers 401 with a Bearer challenge the server "needs login" (`mini-agent mcp login NAME`, oauth_login.py).
  No discovery, no client registration and no browser happen outside a login.
- A 401 without a Bearer challenge is not OAuth: it is left to fail as it did (a missing header, say).
- Every request the flow makes, and the authorization URL shown to the human, must be https or loopback, or on
  the origin of the URL the user configured: a server's metadata cannot send a code, a token or the client's
  registration to a plain-http host, nor the human's browser to a non-http(s) URL.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mini_agent.mcp.oauth_store import TokenFile
from mini_agent.safety.netaddr import LOOPBACK, host_risk

NEEDS_LOGIN = "needs login"
"""A Connection's status when the server wants an OAuth login nobody has done (or that has lapsed)."""
PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback"
"""Registration needs a redirect URI; outside a login none is ever used (nothing registers then)."""


def login_advice(name: str) -> str:
    return f"needs login: run `mini-agent mcp login {name}` (in a session: /mcp login {name})"


@dataclass(frozen=True)
class LoginHandlers:
    """What a login adds to a connection (oauth_login.py): where the browser comes back, and the two steps."""

    redirect_uri: str
    redirect: Callable[[str], Awaitable[None]]
    """Show the authorization URL (and open the browser)."""
    callback: Callable[[], Awaitable[Any]]
    """Wait for the redirect: an AuthorizationCodeResult."""


class UnsafeEndpoint(Exception):
    """The flow was about to talk to (or send the human to) a place it must not."""


def safe_endpoint(url: str, configured: str) -> str | None:
    """Why `url` may not take part in the flow of the server configured at `configured`, or None if it may."""
    parts, home = urlsplit(url), urlsplit(configured)
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and parts.hostname:
        if host_risk(parts.hostname) == LOOPBACK or (parts.scheme, parts.netloc) == (home.scheme, home.netloc):
            return None
        return f"it is plain http to {parts.hostname} (OAuth endpoints must be https, or loopback)"
    return f"its scheme is {parts.scheme or 'missing'!r} (only https, or http on loopback)"


class Auth:
    """The OAuth side of one HTTP or SSE connection: the provider the httpx2 client uses, its request guard, and
    what it learned (needs a login; refused an endpoint) for the connection's error."""

    def __init__(
        self, name: str, url: str, data_dir: Path, secrets: Any = None, login: LoginHandlers | None = None
    ) -> None:
        self.name, self.url = name, url
        self.storage = TokenFile(data_dir, url, name, secrets)
        self.provider = _provider(url, self.storage, login, self)
        self.needs_login = False
        self.refused = ""

    def problem(self) -> tuple[str, str] | None:
        """(status, error) that explains a failed connection better than the transport's error, if any."""
        if self.refused:
            return "failed", self.refused
        if self.needs_login:
            return NEEDS_LOGIN, login_advice(self.name)
        return None

    async def guard(self, request) -> None:
        """An httpx2 request hook: every request of the connection, the flow's included."""
        why = safe_endpoint(str(request.url), self.url)
        if why:
            self.refused = f"refused an OAuth request to {request.url.scheme}://{request.url.host}: {why}"
            raise UnsafeEndpoint(self.refused)

    def client(self, headers: dict[str, str], timeout):
        import httpx2

        return httpx2.AsyncClient(
            headers=headers, timeout=timeout, auth=self.provider, event_hooks={"request": [self.guard]}
        )

    def client_factory(self, headers=None, timeout=None, auth=None):
        """The SSE transport's `httpx_client_factory` (it always passes its timeout)."""
        return self.client(headers or {}, timeout)


def wants_oauth(server: Any, headers: dict[str, str]) -> bool:
    """A remote server the user gave no Authorization header of their own."""
    return server.transport in ("http", "sse") and not any(key.lower() == "authorization" for key in headers)


def _bearer_challenge(response) -> bool:
    return any(part.strip().lower().startswith("bearer") for part in response.headers.get_list("www-authenticate"))


def _more_scope(response) -> bool:
    """A 403 asking for a wider grant (a scope step-up)."""
    from mcp.client.auth.utils import extract_field_from_www_auth

    return response.status_code == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope"


def _same_token(one, other) -> bool:
    return one is not None and other is not None and one.access_token == other.access_token


def _provider(url: str, storage: TokenFile, login: LoginHandlers | None, auth: Auth):
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata, OAuthMetadata, ProtectedResourceMetadata

    class Provider(OAuthClientProvider):
        # Two of the SDK's (2.x) own steps, extended: what it loads at start, and the flow around one request.
        async def _initialize(self) -> None:
            await super()._initialize()
            context = self.context
            if context.current_tokens is not None and storage.expires_at is not None:
                context.token_expiry_time = storage.expires_at  # the SDK forgets it between runs
            found = storage.discovered
            if context.oauth_metadata is None and found.get("oauth_metadata"):
                context.oauth_metadata = OAuthMetadata.model_validate(found["oauth_metadata"])
            if context.protected_resource_metadata is None and found.get("protected_resource_metadata"):
                resource = ProtectedResourceMetadata.model_validate(found["protected_resource_metadata"])
                context.protected_resource_metadata = resource
                context.auth_server_url = str(resource.authorization_servers[0])

        async def _auth_flow(self, request):
            flow, retried = super()._auth_flow(request), False
            try:
                outgoing = await flow.__anext__()
                while True:
                    response = yield outgoing
                    if outgoing is request and login is None and _more_scope(response):
                        auth.needs_login = True  # the SDK would ask for the wider grant: only a login asks
                        return
                    if outgoing is request and response.status_code == 401:
                        if not _bearer_challenge(response):
                            return  # not OAuth: the transport reports the 401 as it is
                        if login is None:
                            if not retried and self.context.can_refresh_token():
                                # The server no longer takes the token though its clock said it was good:
                                # once, as if it had expired, so the SDK refreshes before sending again.
                                retried, sent = True, self.context.current_tokens
                                await flow.aclose()
                                await self._initialize()  # another run may have refreshed it meanwhile
                                if _same_token(sent, self.context.current_tokens):
                                    self.context.token_expiry_time = 1.0
                                flow = super()._auth_flow(request)
                                outgoing = await flow.__anext__()
                                continue
                            auth.needs_login = True
                            return
                    outgoing = await flow.asend(response)
            except StopAsyncIteration:
                return
            finally:
                await flow.aclose()

    metadata = OAuthClientMetadata(
        client_name="mini-agent",
        redirect_uris=[login.redirect_uri if login else PLACEHOLDER_REDIRECT],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    provider = Provider(
        url,
        metadata,
        storage,
        redirect_handler=login.redirect if login else None,
        callback_handler=login.callback if login else None,
    )
    storage.context = provider.context
    return provider
