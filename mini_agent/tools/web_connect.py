"""web_fetch's connections, guarded against server-side request forgery.

Host names are resolved here and the connection goes to the address that was vetted, so a DNS answer cannot
change between check and connect; before connecting to a loopback, private, link-local or metadata address,
the check (ToolContext.check_destination) is asked, at most once per (host, address) per fetch; a loopback port
that a background job of the session alone listens on is not (`Served`). TLS still
verifies the certificate for the host name, and the Host header stays the name. Through a proxy (HTTP_PROXY,
HTTPS_PROXY, ALL_PROXY) the name is resolved and vetted the same way before the proxy is handed it.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterable
from ipaddress import ip_address
from typing import TYPE_CHECKING

from mini_agent.safety.netaddr import LOOPBACK, address_risk, host_risk

if TYPE_CHECKING:
    import httpcore
    import httpx

Check = Callable[[str, str, str], None]
"""ToolContext.check_destination: (url, host, reason) -> None to allow; raises ToolError to refuse."""
Served = Callable[[str, int], bool]
"""Whether a background job of the session alone listens on this loopback (address, port): reached unasked, as
the permission policy already judged the call knowing it (tools/jobs.py)."""


def resolve(host: str, port: int) -> list[str]:
    """The addresses a host name resolves to, in the order the system prefers (tests replace this)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class Destinations:
    """The addresses one fetch may connect to: flagged ones go to the check, each (host, address) once."""

    def __init__(self, check: Check | None, served: Served | None = None) -> None:
        self.check, self.served = check, served
        self.url = ""  # the hop being fetched, for the check to show
        self._allowed: set[tuple[str, str]] = set()

    def vet(self, host: str, address: str, risk: str) -> None:
        """Return if the connection may go ahead; the check's ToolError refuses it."""
        if self.check is None or (host, address) in self._allowed:
            return
        reason = f"{host} is {risk}" if _same_address(host, address) else f"{host} resolves to {address}, {risk}"
        self.check(self.url, host, reason)
        self._allowed.add((host, address))


def _same_address(host: str, address: str) -> bool:
    """Whether the host is the address itself, however written (::ffff:a9fe:a9fe is ::ffff:169.254.169.254)."""
    if host == address:
        return True
    try:
        return ip_address(host) == ip_address(address.split("%", 1)[0])
    except ValueError:
        return False


class _PinnedBackend:
    """An httpcore network backend that connects to the addresses it resolved and vetted itself.

    httpcore still does TLS for the URL's host name (SNI and certificate check) and sends its Host header,
    so only the TCP destination is pinned.
    """

    def __init__(self, destinations: Destinations) -> None:
        import httpcore

        self._sync = httpcore.SyncBackend()
        self._destinations = destinations

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[tuple] | None = None,
    ) -> httpcore.NetworkStream:
        import httpcore

        try:
            addresses = resolve(host, port)
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        risks = {address: address_risk(address) for address in addresses}
        served = self._destinations.served
        jobs = [a for a in addresses if served is not None and risks[a] == LOOPBACK and served(a, port)]
        if jobs:  # a job's server: only where the job alone listens (never the other loopback address)
            addresses, risks = jobs, dict.fromkeys(jobs)
        failure: Exception = httpcore.ConnectError(f"{host} resolves to no address")
        for address in sorted(addresses, key=lambda address: risks[address] is not None):  # public ones first
            risk = risks[address]
            if risk is not None:
                self._destinations.vet(host, address, risk)
            try:
                return self._sync.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        raise failure

    def connect_unix_socket(self, *args: object, **kwargs: object) -> httpcore.NetworkStream:
        raise NotImplementedError("web_fetch connects over TCP only")

    def sleep(self, seconds: float) -> None:
        self._sync.sleep(seconds)


class Connections:
    """The HTTP clients of one fetch: a direct one pinned to vetted addresses, one per proxy in use."""

    def __init__(self, destinations: Destinations, timeout: httpx.Timeout, headers: dict[str, str]) -> None:
        self.destinations, self.timeout, self.headers = destinations, timeout, headers
        self._clients: dict[str | None, httpx.Client] = {}

    def client_for(self, url: str) -> httpx.Client:
        """The client for one hop, after vetting what can be vetted before connecting."""
        import httpx

        self.destinations.url = url
        proxy = _proxy_for(httpx.URL(url))
        if proxy is not None:
            self._vet_for_proxy(httpx.URL(url))
        if proxy not in self._clients:
            self._clients[proxy] = httpx.Client(
                transport=_transport(self.destinations, proxy),
                timeout=self.timeout,
                headers=self.headers,
            )
        return self._clients[proxy]

    def _vet_for_proxy(self, url: httpx.URL) -> None:
        """The proxy resolves the name itself, out of sight: so it is resolved and vetted here first, and a name
        that points at a private, loopback or metadata address asks before the proxy is handed it. A name this
        machine cannot resolve goes to the proxy unvetted (behind a proxy, outside names often resolve only
        there), and so does a name whose answer changes between this lookup and the proxy's."""
        host = url.host
        risk = host_risk(host)
        if risk is not None:
            self.destinations.vet(host, host, risk)
            return
        try:
            addresses = resolve(host, url.port or (443 if url.scheme == "https" else 80))
        except OSError:
            return
        for address in addresses:
            risk = address_risk(address)
            if risk is not None:
                self.destinations.vet(host, address, risk)

    def __enter__(self) -> Connections:
        return self

    def __exit__(self, *exc_info: object) -> None:
        for client in self._clients.values():
            client.close()


def _proxy_for(url: httpx.URL) -> str | None:
    """The proxy the environment (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY) names for this URL, if any.

    Decided here rather than by httpx, which ignores these variables once it is given a transport.
    """
    import urllib.request  # here, not at start-up: it pulls in http.client

    proxies = urllib.request.getproxies_environment()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(url.netloc.decode("ascii"), proxies):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


def _transport(destinations: Destinations, proxy: str | None) -> httpx.HTTPTransport:
    import httpcore
    import httpx

    ssl_context = httpx.create_ssl_context()
    if proxy is not None:
        return httpx.HTTPTransport(verify=ssl_context, proxy=proxy)
    transport = httpx.HTTPTransport(verify=ssl_context)
    # httpx 0.27/0.28 take no network backend (encode/httpx#3749 proposes one), so the connection pool it
    # built is swapped for the same pool connecting through the pinned backend. If httpx ever stops
    # keeping its pool there, refuse to fetch rather than fetch unguarded.
    if not isinstance(getattr(transport, "_pool", None), httpcore.ConnectionPool):
        raise RuntimeError(f"httpx {httpx.__version__} has no connection pool to pin; web_fetch needs updating")
    transport._pool = httpcore.ConnectionPool(ssl_context=ssl_context, network_backend=_PinnedBackend(destinations))
    return transport
