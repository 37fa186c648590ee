"""Connections to MCP servers through the official `mcp` SDK: a ClientSession over stdio_client or
streamable_http_client, all on ONE background asyncio loop thread, with synchronous wrappers (and timeouts) for
the synchronous core. A server that died is noticed when a call fails and started again on its next use.

A stdio server is the agent's child, and never outlives it: its process group (the SDK starts it in a session
of its own) is found by its stderr file, handed to the bash watchdog (killed even if the agent is killed -9) and
killed at exit if it is still there. It gets the SDK's minimal environment plus the network settings a
`npx`/`uvx` server needs behind a proxy or a private CA (NETWORK_VARIABLES), never the agent's secrets.

A remote server's OAuth (a stored token, its refresh, "needs login") is oauth.py's: `_transport` hands the
httpx2 client its provider.

The SDK's transports are async context managers that must be entered and left in the same task, so each server
has one supervising task that opens the transport and the session, lists the tools, then waits to be stopped.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mini_agent.errors import ConfigError
from mini_agent.mcp.catalog import Catalog
from mini_agent.mcp.event_loop import EventLoop
from mini_agent.mcp.servers import ServerDef, expand
from mini_agent.processes.stdio_server import (
    NETWORK_VARIABLES,
    child_writing_to,
    network_advice,
    require_command,
    watch_token,
)

Status = Literal["pending", "starting", "ready", "failed", "untrusted", "needs login"]
CALL_TIMEOUT = 120.0
"""Seconds one tool call may take by default (mcp_call_timeout): a hung server must not hold a turn for long."""
STOP_TIMEOUT = 3.0
STDERR_TAIL = 400


@dataclass(frozen=True)
class RemoteTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict
    read_only: bool


class Connection:
    """One server: started in the background, its tools once ready, calls, and why it failed if it did."""

    def __init__(
        self,
        server: ServerDef,
        on_change: Callable[[Connection], None],
        secrets: Any = None,
        call_timeout: float = CALL_TIMEOUT,
        data_dir: Path | None = None,
        login: Any = None,
    ) -> None:
        self.server = server
        self.data_dir = data_dir
        """Where OAuth tokens are kept (oauth_store.py); None: a remote server gets no OAuth."""
        self.login = login
        """oauth.LoginHandlers while `mini-agent mcp login` runs this connection; None otherwise."""
        self._auth: Any = None
        self.call_timeout = call_timeout
        self.group = 0
        """The stdio server's process group (its pid), once started."""
        self.status: Status = "pending"
        self.error = ""
        self.tools: tuple[RemoteTool, ...] = ()
        self.catalog = Catalog()
        """Its resources and prompts (catalog.py), listed with its tools."""
        self._on_change = on_change
        self._secrets = secrets
        self._session: Any = None
        self._run = 0
        """Which start the current session belongs to: a run that ends late must not touch its successor."""
        self._stop: Any = None  # the running start's asyncio.Event
        self._ready = threading.Event()
        self._task: Any = None
        self._lock = threading.Lock()

    # ---- lifecycle (any thread) ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the server in the background unless it is starting or running."""
        with self._lock:
            if self.status in ("starting", "ready"):
                return
            self._end_run()
            self._run += 1
            self._ready.clear()
            self.status, self.error = "starting", ""
            import asyncio

            loop = EventLoop.shared()
            self._task = asyncio.run_coroutine_threadsafe(self._supervise(self._run), loop.loop)
            _RUNNING.add(self)
            _stop_before_thread_pools_end()

    def wait_ready(self, timeout: float) -> bool:
        return self._ready.wait(timeout) and self.status == "ready"

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop the server; `timeout` 0 only asks it to stop. Whatever the SDK managed, the stdio server's
        process group is gone afterwards (a server still starting, or one that ignores its closed stdin)."""
        task = self._task
        self._end_run()
        if task is not None and timeout > 0:
            try:
                task.result(timeout)
            except BaseException:  # stopping is best effort
                task.cancel()
            _RUNNING.discard(self)
            self._kill_group()

    def reconnect(self) -> None:
        """Stop the server, however it is (hung, failed, ready), and start it again in the background."""
        self.stop()
        with self._lock:
            if self.status in ("starting", "ready"):
                self.status = "pending"  # stopped: start() would take it for a running server
        self.start()

    def _kill_group(self) -> None:
        group, self.group = self.group, 0
        if group > 1:
            try:
                os.killpg(group, signal.SIGKILL)
            except OSError:
                pass  # already gone

    def _end_run(self) -> None:
        stop = self._stop
        if stop is not None:
            EventLoop.shared().loop.call_soon_threadsafe(stop.set)

    def call(
        self,
        tool: str,
        arguments: dict,
        timeout: float | None = None,
        start_timeout: float = 10.0,
        meta: dict | None = None,
    ) -> Any:
        """Call a tool and return the SDK's CallToolResult; a dead server is started again first. `meta` goes in
        the request's `_meta` (tools.py: the user's original request).

        Raises ConnectionError when the server cannot be reached (it is then marked failed)."""
        return self.request(lambda session: session.call_tool(tool, arguments, meta=meta), timeout, start_timeout)

    def read_resource(self, uri: str, timeout: float | None = None) -> Any:
        """The SDK's ReadResourceResult for `uri`; errors as `call`'s."""
        return self.request(lambda session: session.read_resource(uri), timeout)

    def get_prompt(self, name: str, arguments: dict[str, str], timeout: float | None = None) -> Any:
        """The SDK's GetPromptResult; errors as `call`'s."""
        return self.request(lambda session: session.get_prompt(name, arguments or None), timeout)

    def request(self, make: Callable[[Any], Any], timeout: float | None = None, start_timeout: float = 10.0) -> Any:
        """`make(session)`'s coroutine run on the loop; a dead server is started again first. Raises
        ConnectionError when the server cannot be reached (it is then marked failed), the SDK's MCPError when it
        answered with a protocol error."""
        timeout = self.call_timeout if timeout is None else timeout
        if self.status != "ready":
            self.start()
            if not self.wait_ready(start_timeout):
                raise ConnectionError(self.error or f"the server did not start within {start_timeout:g} s")
        session, run = self._session, self._run
        try:
            return EventLoop.shared().run(make(session), timeout)
        except TimeoutError:
            raise ConnectionError(f"no answer within {timeout:g} s (mcp_call_timeout sets the limit)") from None
        except Exception as exc:
            from mcp.shared.exceptions import MCPError
            from mcp.types import CONNECTION_CLOSED

            explained = self._auth.problem() if self._auth is not None else None
            if explained is not None:  # the token lapsed mid-session and could not be refreshed
                self._failed(run, explained[1], explained[0])
            elif isinstance(exc, MCPError) and exc.error.code != CONNECTION_CLOSED:
                raise  # the server answered with a protocol error: it is alive
            self._failed(
                run, "the connection closed (the server exited)" if isinstance(exc, MCPError) else _describe(exc)
            )
            self._end_run()
            raise ConnectionError(self.error) from None

    # ---- on the loop ---------------------------------------------------------------------------------------

    async def _supervise(self, run: int) -> None:
        import asyncio
        import tempfile
        from contextlib import AsyncExitStack

        self._stop = stop = asyncio.Event()
        stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        try:
            if self.server.transport == "stdio":  # before the SDK's import, which takes a second or more
                require_command(expand(self.server.command), self._environment().get("PATH", ""))
            from mcp import ClientSession

            from mini_agent.mcp.catalog import list_catalog

            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport(stderr))
                self._watch(stderr)
                session = await stack.enter_async_context(ClientSession(read, write))
                initialized = await session.initialize()
                tools = await _list_tools(session)
                catalog = await list_catalog(session, initialized.capabilities)
                if run != self._run:
                    return
                self._session, self.tools, self.catalog, self.status = session, tools, catalog, "ready"
                self._ready.set()
                self._on_change(self)
                await stop.wait()
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure of a server is reported, none ends the agent
            told = _tail(stderr)
            explained = self._auth.problem() if self._auth is not None else None
            if explained is not None:
                self._failed(run, explained[1], explained[0])
            else:
                self._failed(run, _describe(exc) + told + network_advice(told) + _transport_advice(self.server, exc))
        finally:
            stderr.close()
            if run == self._run:
                self._ready.set()

    def _transport(self, stderr):
        server = self.server
        if server.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            env = self._environment()
            parameters = StdioServerParameters(
                command=expand(server.command),
                args=[expand(arg) for arg in server.args],
                env=env,
                cwd=expand(server.cwd) if server.cwd else None,
            )
            return stdio_client(parameters, errlog=stderr)
        headers = {key: self._secret(expand(value), key) for key, value in server.headers}
        url, self._auth = expand(server.url), None
        if self.data_dir is not None:
            from mini_agent.mcp import oauth

            if oauth.wants_oauth(server, headers):
                self._auth = oauth.Auth(server.name, url, self.data_dir, self._secrets, self.login)
        if server.transport == "sse":
            from mcp.client.sse import sse_client

            if self._auth is None:
                return sse_client(url, headers=headers)
            return sse_client(
                url, headers=headers, auth=self._auth.provider, httpx_client_factory=self._auth.client_factory
            )
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(30.0, read=300.0)
        client = (
            httpx2.AsyncClient(headers=headers, timeout=timeout)
            if self._auth is None
            else self._auth.client(headers, timeout)
        )
        return _closing(client, streamable_http_client(url, http_client=client))

    def _environment(self) -> dict[str, str]:
        """What a stdio server gets on top of the SDK's minimal environment (HOME, PATH, USER, ...)."""
        env = {name: os.environ[name] for name in NETWORK_VARIABLES if os.environ.get(name)}
        env.update(watch_token())
        env.update({key: self._secret(expand(value), key) for key, value in self.server.env})
        env.setdefault("PATH", os.environ.get("PATH", ""))
        return env

    def _watch(self, stderr) -> None:
        """Find the stdio server's process group, the child of ours whose stderr is our file, and have the
        watchdog kill it if the agent dies. The SDK does not say its pid; the file's identity is exact."""
        if self.server.transport != "stdio":
            return
        try:
            mine = os.fstat(stderr.fileno())
        except (OSError, ValueError):
            return
        group = child_writing_to(mine.st_dev, mine.st_ino)
        if group:
            self.group = group
            try:
                from mini_agent.processes.watchdog import watchdog

                watchdog().watch(group)
            except Exception:  # noqa: BLE001 - a missing helper must not cost the server
                pass

    def _secret(self, value: str, name: str) -> str:
        """Header and environment values are usually credentials: masked wherever the agent shows text."""
        if self._secrets is not None:
            self._secrets.add(value, f"{name} of MCP server {self.server.name}")
        return value

    def _failed(self, run: int, error: str, status: Status = "failed") -> None:
        if run != self._run or self.status in ("failed", "needs login"):
            return
        if self._secrets is not None:
            error = self._secrets.mask(error)
        self.status, self.error, self._session = status, error, None
        self._ready.set()
        self._on_change(self)


class _closing:
    """The HTTP transport, closing the client it was given when it ends."""

    def __init__(self, client, transport) -> None:
        self.client, self.transport = client, transport

    async def __aenter__(self):
        await self.client.__aenter__()
        return await self.transport.__aenter__()

    async def __aexit__(self, *exc):
        try:
            return await self.transport.__aexit__(*exc)
        finally:
            await self.client.__aexit__(None, None, None)


async def _list_tools(session) -> tuple[RemoteTool, ...]:
    tools, cursor = [], None
    while True:
        from mcp.types import PaginatedRequestParams

        listed = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        for tool in listed.tools:
            hint = tool.annotations.read_only_hint if tool.annotations else None
            tools.append(RemoteTool(tool.name, tool.description or "", dict(tool.input_schema), bool(hint)))
        cursor = listed.next_cursor
        if not cursor:
            return tuple(sorted(tools, key=lambda item: item.name))


def _describe(exc: BaseException) -> str:
    """The innermost useful message of an exception (the SDK wraps failures in exception groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc) or type(exc).__name__
    return text if type(exc).__name__ in text else f"{type(exc).__name__}: {text}"


def _transport_advice(server: ServerDef, exc: BaseException) -> str:
    """A URL that answers the streamable transport's POST with 404 or 405 is most likely an older SSE server."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    status = getattr(getattr(exc, "response", None), "status_code", None)
    refused = status in (404, 405) or any(words in str(exc) for words in ("Not Found", "Not Allowed", "error response"))
    if server.transport == "http" and (refused or server.url.rstrip("/").endswith("/sse")):
        return (
            f" — if {server.name} is an SSE server (its URL often ends in /sse), add it with "
            f'`mini-agent mcp add --transport sse {server.name} URL` (or `type = "sse"`)'
        )
    return ""


def _tail(stderr) -> str:
    try:
        stderr.seek(0)
        text = stderr.read()[-STDERR_TAIL:].strip()
    except (OSError, ValueError):
        return ""
    return f" (stderr: {' '.join(text.split())})" if text else ""


_RUNNING: set[Connection] = set()
_REGISTERED: list[bool] = []


def _stop_before_thread_pools_end() -> None:
    """At exit, stop the servers before the interpreter shuts its thread pools down (threading's own exit hooks
    run before atexit's, the last registered first): after that the loop cannot resolve a host name, so the
    DELETE that ends a streamable HTTP session to `localhost` failed ("Session termination failed: cannot
    schedule new futures after shutdown") and the session stayed open on the server (issue 27)."""
    if _REGISTERED:
        return
    import concurrent.futures.thread  # noqa: F401 - its exit hook registered first, so it runs after ours
    import threading

    try:
        threading._register_atexit(stop_all)  # type: ignore[attr-defined]
    except (AttributeError, RuntimeError):  # another Python, or already exiting: atexit's stop_all still runs
        pass
    _REGISTERED.append(True)


@atexit.register
def stop_all() -> None:
    """At exit, stop every server this process started (close stdin, wait briefly, then kill), all at once."""
    running = list(_RUNNING)
    for connection in running:
        connection.stop(0)
    for connection in running:
        connection.stop(STOP_TIMEOUT)
    for connection in running:
        connection._kill_group()
