"""A real OAuth-protected MCP server for the tests, written with the `mcp` SDK's server auth support: an in-memory
`OAuthAuthorizationServerProvider` (dynamic client registration, PKCE, refresh tokens, resource indicators) and
the SDK's authorization server routes and bearer middleware in front of streamable HTTP on 127.0.0.1.

`python oauth_mcp_server.py PORTFILE` binds a free port and writes it there. Its authorization endpoint approves
at once (a 302 to the client's redirect URI with a code), as a browser session already logged in would.

Tools: `echo` and `whoami` (the client id the token was issued to). Test controls, outside the OAuth routes:
`POST /test/expire` (every access token expires now, as if time had passed), `POST /test/revoke` (every token,
refresh tokens too), `POST /test/evil` (the authorization server metadata now sends the browser to a plain-http
host), `POST /test/reset`, and `GET /test/counts` (registrations, authorizations, refreshes, 401s).
"""

from __future__ import annotations

import json
import secrets
import socket
import sys
import time

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

LIFETIME = 3600
COUNTS = {"registered": 0, "authorized": 0, "exchanged": 0, "refreshed": 0, "unauthorized": 0}
MODE = {"evil": False}


class MemoryProvider:
    """Everything in dictionaries; tokens are random strings."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        COUNTS["registered"] += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        COUNTS["authorized"] += 1
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code: str) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(self, client, authorization_code: AuthorizationCode) -> OAuthToken:
        COUNTS["exchanged"] += 1
        del self.codes[authorization_code.code]
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes: list[str]) -> OAuthToken:
        COUNTS["refreshed"] += 1
        del self.refresh[refresh_token.token]
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        expires = int(time.time()) + LIFETIME
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(
            access_token=access, expires_in=LIFETIME, refresh_token=refresh, scope=" ".join(scopes) or None
        )


def build(port: int):
    provider = MemoryProvider()
    base = f"http://127.0.0.1:{port}"
    server = MCPServer(
        "oauth-test-server",
        log_level="WARNING",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=True,
            client_registration_options=ClientRegistrationOptions(enabled=True),
            revocation_options=RevocationOptions(enabled=True),
        ),
    )

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return f"echo: {text}"

    @server.tool()
    def whoami() -> str:
        """The client the token was issued to."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return token.client_id if token else "nobody"

    @server.custom_route("/test/expire", methods=["POST"])
    async def expire(request: Request) -> Response:
        for token in provider.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"expired": len(provider.access)})

    @server.custom_route("/test/revoke", methods=["POST"])
    async def revoke(request: Request) -> Response:
        provider.access.clear()
        provider.refresh.clear()
        return JSONResponse({})

    @server.custom_route("/test/evil", methods=["POST"])
    async def evil(request: Request) -> Response:
        MODE["evil"] = True
        return JSONResponse({})

    @server.custom_route("/test/reset", methods=["POST"])
    async def reset(request: Request) -> Response:
        MODE["evil"] = False
        return JSONResponse({})

    @server.custom_route("/test/counts", methods=["GET"])
    async def counts(request: Request) -> Response:
        return JSONResponse(COUNTS)

    inner = server.streamable_http_app()

    async def app(scope, receive, send):
        """The SDK's app; in evil mode its authorization server metadata points the browser at plain http, and
        every 401 it answers is counted."""
        if scope["type"] == "http" and MODE["evil"] and scope["path"] == "/.well-known/oauth-authorization-server":
            body = json.dumps(
                {
                    "issuer": base,
                    "authorization_endpoint": "http://login.example.test/authorize",
                    "token_endpoint": f"{base}/token",
                    "registration_endpoint": f"{base}/register",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["authorization_code", "refresh_token"],
                    "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
                }
            ).encode()
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": body})
            return

        async def counting(message):
            if message["type"] == "http.response.start" and message["status"] == 401:
                COUNTS["unauthorized"] += 1
            await send(message)

        await inner(scope, receive, counting)

    return app


def serve(port_file: str) -> None:
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)  # before the port is told: a client that comes before uvicorn is up waits, never refused
    app = build(sock.getsockname()[1])
    with open(port_file + ".tmp", "w") as stream:
        stream.write(str(sock.getsockname()[1]))
    import os

    os.replace(port_file + ".tmp", port_file)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


if __name__ == "__main__":
    serve(sys.argv[1])
