"""All the MCP servers of a session: which may start (trust), starting them in the background, waiting for
them in a one-shot run, their tools for the registry, and their status for `/mcp`.

Failures are reported through `report(server, error)` once per failure (and `report(server, None)` when the
server is back); tool changes through `publish(tools)`. Both are called from the background loop's thread. A
failure that comes before anyone listens (a server that dies while the agent is still being built) is kept and
told when `bind` connects the listeners, so no failure goes unsaid in any front end or output format.

A one-shot run waits a little (mcp_timeout) for its servers before the first request; one that is slower (an
`npx -y` server's first download) joins when it is ready: its tools are in the requests from then on.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mini_agent.mcp.connection import Connection
from mini_agent.mcp.servers import ServerDef
from mini_agent.tools.base import Tool

JOINED = ""
"""`report(server, JOINED)`: a late server is ready and its tools are in the requests from now on."""
FAILED = ("failed", "needs login")
"""A server's statuses that are told once as a failure (a login it needs is one: oauth.py)."""


@dataclass(frozen=True)
class ServerStatus:
    """One server as `/mcp` and `mini-agent mcp list` show it."""

    name: str
    origin: str
    source: str
    summary: str
    status: str
    error: str
    tools: tuple[str, ...]
    resources: int = 0
    """Resources and resource templates it lists."""
    prompts: tuple[str, ...] = ()


class McpManager:
    def __init__(
        self,
        servers: tuple[ServerDef, ...],
        secrets: Any = None,
        publish: Callable[[list[Tool]], None] | None = None,
        report: Callable[[str, str | None], None] | None = None,
        call_timeout: float | None = None,
        data_dir: Path | None = None,
        untrusted: Iterable[str] = (),
    ) -> None:
        """`untrusted`: the project servers the human did not trust (app/mcp_setup.py `screen`): never started."""
        self.servers = servers
        self._publish = publish
        self._report = report
        self._lock = threading.Lock()
        self._failed: set[str] = set()
        self._untold: list[str] = []
        """Servers that failed before `bind`: told then."""
        self._untrusted: set[str] = set(untrusted)
        self._late: set[str] = set()
        timeout = {} if call_timeout is None else {"call_timeout": call_timeout}
        self.connections = {
            server.name: Connection(server, self._changed, secrets, data_dir=data_dir, **timeout) for server in servers
        }
        for name in self._untrusted & self.connections.keys():
            self.connections[name].status = "untrusted"

    def bind(self, publish: Callable[[list[Tool]], None], report: Callable[[str, str | None], None] | None) -> None:
        """Where tool changes and failures go (the agent, built after the manager); failures so far are told."""
        with self._lock:
            self._publish, self._report = publish, report
            untold, self._untold = self._untold, []
        if publish is not None:
            publish(self.tools())  # servers that were ready before anyone listened
        for name in untold:
            connection = self.connections[name]
            if report is not None and connection.status in FAILED:
                report(name, connection.error)

    def start(self) -> None:
        """Start every allowed server in the background; returns at once."""
        for name, connection in self.connections.items():
            if name not in self._untrusted:
                connection.start()

    def wait_ready(self, timeout: float) -> list[str]:
        """Wait up to `timeout` seconds for every started server (a failed one ends its wait at once); returns
        the names of the late ones, which join when they are ready."""
        deadline = time.monotonic() + timeout
        late = []
        for name, connection in self.connections.items():
            if name in self._untrusted:
                continue
            if not connection._ready.wait(max(0.0, deadline - time.monotonic())):
                late.append(name)
        with self._lock:
            self._late.update(late)
        return late

    def failures(self) -> list[ServerStatus]:
        """The servers that failed or were not trusted, for the result of a one-shot run."""
        return [row for row in self.status() if row.status in (*FAILED, "untrusted")]

    def tools(self) -> list[Tool]:
        """The tools of every server that has listed them, sorted by server then tool: a stable prefix; then
        the two resource tools while a ready server lists resources (resources.py)."""
        from mini_agent.mcp.resources import resource_tools
        from mini_agent.mcp.tools import remote_tools

        tools: list[Tool] = []
        for name in sorted(self.connections):
            connection = self.connections[name]
            if connection.tools:
                tools.extend(remote_tools(connection))
        return tools + resource_tools(self)

    def reconnect(self, name: str) -> None:
        """Stop the server (hung, failed or fine) and start it again in the background; a project server not
        trusted stays out. Its tools and the model's hint follow when it is ready or fails (`_changed`)."""
        if name not in self._untrusted:
            self.connections[name].reconnect()

    def status(self) -> list[ServerStatus]:
        rows = []
        for name in sorted(self.connections):
            connection = self.connections[name]
            server = connection.server
            tools = tuple(tool.name for tool in connection.tools)
            status = "late" if name in self._late and connection.status == "starting" else connection.status
            catalog = connection.catalog
            rows.append(
                ServerStatus(
                    name,
                    server.origin,
                    server.source,
                    server.summary(),
                    status,
                    connection.error,
                    tools,
                    len(catalog.resources),
                    tuple(prompt.name for prompt in catalog.prompts),
                )  # fmt: skip
            )
        return rows

    def _changed(self, connection: Connection) -> None:
        name = connection.server.name
        with self._lock:
            if connection.status in FAILED:
                if name in self._failed:
                    return  # told once per failure, not once per failed call
                self._failed.add(name)
                error: str | None = connection.error
                if self._report is None:
                    self._untold.append(name)
                    return
            elif connection.status == "ready":
                recovered = name in self._failed
                self._failed.discard(name)
                joined = name in self._late
                self._late.discard(name)
                if self._publish is not None:
                    self._publish(self.tools())
                if not (recovered or joined):
                    return
                error = None if recovered else JOINED
            else:
                return
        if self._report is not None:
            self._report(name, error)
