"""web_fetch: read a web page as Markdown, or a text resource as text, 40,000 characters at a time.

One download per URL every 15 minutes: the converted text is cached, so paging through a long page with
`offset` never refetches. Failures to reach the server raise NetworkError (the agent counts them to mark the
tool degraded); everything the server answered (4xx/5xx, binary content, oversize bodies) is a ToolError.

Guarding against server-side request forgery is web_connect.py's job: every hop's address is vetted before
connecting, and redirects are followed here by hand, never reading a redirect's body.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from contextlib import closing
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

from pydantic import Field

from mini_agent import __version__
from mini_agent.tools.base import NetworkError, ToolContext, ToolError, tool
from mini_agent.tools.jobs import serving
from mini_agent.tools.web_connect import Check, Connections, Destinations, Served
from mini_agent.tools.web_content import decode, kind_of, sniff, snippet
from mini_agent.xmltext import system_hint

if TYPE_CHECKING:
    import httpx


CONNECT_TIMEOUT = 10.0
"""Seconds to establish the connection (DNS, TCP, TLS)."""
READ_TIMEOUT = 30.0
"""Seconds to wait for the next bytes of the response."""
TOTAL_TIMEOUT = 120.0
"""Seconds for the whole download, so a server trickling bytes cannot hold the agent forever."""
MAX_REDIRECTS = 10
MAX_BYTES = 10 * 1024 * 1024
PAGE_CHARS = 40_000
CACHE_TTL = 15 * 60.0
CACHE_ENTRIES = 32
USER_AGENT = f"Mozilla/5.0 (compatible; mini-agent/{__version__}; web_fetch)"
ACCEPT = "text/html,text/markdown,application/xhtml+xml;q=0.9,text/plain;q=0.8,application/json;q=0.8,*/*;q=0.5"
HOST_AND_PORT = re.compile(r"^[\w.-]+:\d+(/|$)")
NEARLY_EMPTY = 200
"""An HTML page converting to fewer characters than this is probably built by JavaScript."""

GUIDANCE = """
Fetch a web page or text resource by its http(s) URL: documentation, API references, changelogs, issues,
articles, raw source files, JSON/XML/CSV endpoints. HTML comes back as Markdown (title first; scripts,
navigation menus and sidebars removed; links made absolute so you can follow them); text formats come back
as they are. Long pages arrive 40,000 characters at a time: when the result ends with a truncated
system_hint, call web_fetch again with the same url and the offset it names (the page is cached for 15
minutes, so paging costs no download). Prefer raw URLs for source files (e.g. raw.githubusercontent.com).
Not for local files (use read_file) or binary content (images, PDFs, archives are refused). It does not run
JavaScript or log in: pages built in the browser or behind a login come back nearly empty. Network failures
are reported as errors; do not retry the same URL in a loop.
"""


@dataclass(frozen=True)
class Page:
    """A fetched URL as the model will read it, with where it came from."""

    url: str
    final_url: str
    content_type: str
    text: str
    fetched_at: float
    """time.monotonic() when it was downloaded, for the cache's time to live."""
    note: str = ""


_cache: OrderedDict[str, Page] = OrderedDict()
_cache_lock = threading.Lock()


def _check(ctx: ToolContext, url: str, offset: int = 0) -> None:
    _checked_url(url)


@tool(risk="network", guidance=GUIDANCE, precheck=_check, alias="WebFetch", key_argument="url")
def web_fetch(ctx: ToolContext, url: str, offset: Annotated[int, Field(ge=0)] = 0) -> str:
    """Fetch a web page over HTTP(S) and return its content: HTML as Markdown, text formats as text.

    HTML pages are converted to Markdown with the page title first and scripts, styles and navigation
    chrome removed; plain text, Markdown, JSON, XML and CSV are returned as they are. Binary content
    (images, PDFs, archives) is refused. At most 40,000 characters come back per call: a longer result ends
    with a truncated hint naming the offset to continue from. Pages are cached for 15 minutes, so reading
    on with offset does not download again.

    Args:
        url: Full http:// or https:// URL of the page.
        offset: Character offset to start reading from; use the next offset given by a truncated hint.
    """
    url = _checked_url(url)
    page = _cached(url)
    if page is None:
        served = (lambda address, port: ctx.jobs.serving(address, port) is not None) if ctx.jobs else None
        page = _fetch(url, ctx.check_destination, served)
        if served is None or serving(ctx, url) is None:  # a job's dev server changes under the cache
            _remember(page)
    return _render(page, offset)


def clear_cache() -> None:
    """Forget every fetched page."""
    with _cache_lock:
        _cache.clear()


def _checked_url(url: str) -> str:
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ToolError(f"'{url}' is not a valid URL: {exc}.") from None
    scheme = parts.scheme.lower()
    if not scheme or HOST_AND_PORT.match(url):  # "localhost:8000/x" parses as the scheme "localhost"
        raise ToolError(f"'{url}' is not a full URL: web_fetch needs an http:// or https:// URL, e.g. https://{url}")
    if scheme not in ("http", "https"):
        local = " To read a local file, use read_file." if scheme == "file" else ""
        raise ToolError(f"web_fetch only fetches http:// and https:// URLs, not '{scheme}:' ({url}).{local}")
    if not parts.hostname:
        raise ToolError(f"'{url}' has no host name; give a full URL such as https://example.com/page.")
    return url


def _cached(url: str) -> Page | None:
    with _cache_lock:
        page = _cache.get(url)
        if page is None:
            return None
        if time.monotonic() - page.fetched_at > CACHE_TTL:
            del _cache[url]
            return None
        _cache.move_to_end(url)
        return page


def _remember(page: Page) -> None:
    with _cache_lock:
        _cache[page.url] = page
        _cache.move_to_end(page.url)
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)


def _fetch(url: str, check: Check | None, served: Served | None = None) -> Page:
    """Download and convert one URL; every failure becomes a ToolError or NetworkError that says why. `served`: a
    loopback address and port a background job of the session alone listens on, reached without asking."""
    import httpx

    connections = Connections(
        Destinations(check, served),
        httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
        {"User-Agent": USER_AGENT, "Accept": ACCEPT},
    )
    try:
        with connections, closing(_open(url, connections)) as response:
            return _read_page(url, response)
    except httpx.TimeoutException as exc:
        raise NetworkError(f"Timed out fetching {url}: {_timeout_phase(exc)}.") from None
    except httpx.ConnectError as exc:
        raise NetworkError(f"Cannot connect to {urlsplit(url).netloc}: {_connect_failure(exc)}.") from None
    except httpx.TransportError as exc:
        raise NetworkError(f"Network error fetching {url}: {exc or type(exc).__name__}.") from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise ToolError(f"Cannot fetch {url}: {exc or type(exc).__name__}.") from None


def _open(url: str, connections: Connections) -> httpx.Response:
    """GET the URL, following redirects by hand so that every hop's destination is vetted before connecting."""
    hop, request = url, None
    for _ in range(MAX_REDIRECTS + 1):
        client = connections.client_for(hop)
        response = client.send(request or client.build_request("GET", hop), stream=True)
        if response.next_request is None:
            return response
        response.close()  # a redirect's body is never read: it can be endless, and nobody wants it
        request = response.next_request
        hop = str(request.url)
        if request.url.scheme not in ("http", "https"):
            raise ToolError(
                f"{response.url} redirected to '{response.headers.get('location', hop)}', which web_fetch does "
                "not follow: it fetches only http:// and https:// URLs."
            )
    raise ToolError(f"Too many redirects: {url} redirected more than {MAX_REDIRECTS} times (a loop?).")


def _timeout_phase(exc: Exception) -> str:
    import httpx

    if isinstance(exc, httpx.ConnectTimeout):
        return f"no connection within {CONNECT_TIMEOUT:g} s"
    if isinstance(exc, httpx.ReadTimeout):
        return f"the server sent nothing for {READ_TIMEOUT:g} s"
    return str(exc) or type(exc).__name__


def _connect_failure(exc: Exception) -> str:
    detail = str(exc) or type(exc).__name__
    lowered = detail.lower()
    if "ssl" in lowered or "certificate" in lowered or "tls" in lowered:
        return f"TLS error ({detail})"
    if any(sign in lowered for sign in ("name or service", "nodename", "name resolution", "getaddrinfo")):
        return f"DNS lookup failed, check the host name ({detail})"
    if "refused" in lowered:
        return f"connection refused, nothing is listening there ({detail})"
    return detail


def _read_page(url: str, response: httpx.Response) -> Page:
    if not response.is_success:
        raise ToolError(_status_message(url, response))
    content_type = response.headers.get("content-type", "")
    kind = kind_of(content_type)
    if kind is None:
        raise ToolError(
            f"{url} is '{content_type.split(';')[0].strip()}', which web_fetch does not read: it returns HTML "
            "(as Markdown) and text formats (plain text, Markdown, JSON, XML, CSV) only."
        )
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BYTES:
        raise ToolError(f"{url} is {int(declared):,} bytes (Content-Length), over web_fetch's limit of {_limit()}.")
    body = _read_capped(url, response)
    kind = kind or sniff(url, body)
    text = decode(body, response.charset_encoding, html=kind == "html")
    final_url = str(response.url)
    note = ""
    if kind == "html":
        from mini_agent.tools.html_to_markdown import html_to_markdown

        text = html_to_markdown(text, final_url)
        if len(text) < NEARLY_EMPTY:
            note = "the page has almost no text; it may be built by JavaScript, which web_fetch does not run."
    return Page(url, final_url, content_type or "(not given)", text, time.monotonic(), note)


def _read_capped(url: str, response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + TOTAL_TIMEOUT
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_BYTES:
            raise ToolError(f"{url} is larger than web_fetch's limit of {_limit()}: stopped after {size:,} bytes.")
        if time.monotonic() > deadline:
            raise NetworkError(f"Timed out fetching {url}: the download took longer than {TOTAL_TIMEOUT:g} s.")
        chunks.append(chunk)
    return b"".join(chunks)


def _limit() -> str:
    return f"{MAX_BYTES / 1024 / 1024:g} MB ({MAX_BYTES:,} bytes)"


def _status_message(url: str, response: httpx.Response) -> str:
    final_url = str(response.url)
    where = url if final_url == url else f"{url} (redirected to {final_url})"
    message = f"HTTP {response.status_code} {response.reason_phrase} for {where}."
    if response.status_code in (404, 410):
        message += " The page does not exist: check the URL, or find the page's current address."
    elif response.status_code in (401, 403):
        message += " The server refuses access (login required or automated clients blocked)."
    elif response.status_code == 429:
        message += " Rate limited: wait before fetching from this site again."
    elif response.status_code >= 500:
        message += " The server failed; a later retry may work."
    snippet = _body_snippet(response)
    return f"{message}\nResponse body starts: {snippet}" if snippet else message


def _body_snippet(response: httpx.Response) -> str:
    """The first words of an error page, which often say what went wrong."""
    head = b""
    try:
        for chunk in response.iter_bytes():
            head += chunk
            if len(head) >= 8192:
                break
    except Exception:  # the status line is the message; an unreadable body must not hide it
        return ""
    return snippet(head, response.headers.get("content-type", ""), response.charset_encoding)


def _render(page: Page, offset: int) -> str:
    total = len(page.text)
    if offset and offset >= total:
        raise ToolError(
            f"offset {offset} is past the end of {page.url}, which has {total:,} characters; "
            f"use an offset below {total} (0 for the start)."
        )
    end = _page_end(page.text, offset)
    lines = [f"URL: {page.url}"]
    if page.final_url != page.url:
        lines.append(f"Final URL: {page.final_url}")
    lines.append(f"Content-Type: {page.content_type}")
    if offset or end < total:
        lines.append(f"Characters: {offset}-{end} of {total}")
    if page.note:
        lines.append(f"Note: {page.note}")
    content = page.text[offset:end] if total else "(The response has no text content.)"
    result = "\n".join(lines) + "\n\n" + content
    if end < total:
        hint = system_hint(
            "truncated",
            f"Showing characters {offset}-{end} of {total}. Call web_fetch with the same url and "
            f"offset={end} to read on.",
            shown=f"{offset}-{end}",
            total=str(total),
            next_offset=str(end),
        )
        result = result.rstrip("\n") + "\n\n" + hint
    return result


def _page_end(text: str, offset: int) -> int:
    """Where this call's part ends: PAGE_CHARS on, moved back to a line break when one is near."""
    end = offset + PAGE_CHARS
    if end >= len(text):
        return len(text)
    newline = text.rfind("\n", offset + PAGE_CHARS // 2, end)
    return newline + 1 if newline != -1 else end
