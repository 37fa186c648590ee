"""The one background asyncio loop every MCP connection of this process runs on, with a synchronous `run` (and
its timeout) for the synchronous core.
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine
from typing import Any

from mini_agent import threads


class EventLoop:
    """The one background loop every MCP connection of this process runs on."""

    _instance: EventLoop | None = None
    _lock = threading.Lock()

    def __init__(self) -> None:
        import asyncio  # not at module level: ~25 ms that a REPL's start-up must not pay
        import logging

        # The SDK logs a server's bad line or a failed read as a traceback on stderr; the failure reaches the
        # human as the server's status and one notice instead, so its log stays out of the terminal.
        sdk_log = logging.getLogger("mcp")
        sdk_log.addHandler(logging.NullHandler())
        sdk_log.propagate = False

        self.loop = asyncio.new_event_loop()
        # The stdio servers the SDK starts here inherit this thread's signal mask: they must take SIGTERM.
        self.thread = threads.start(self.loop.run_forever, name="mcp-loop", takes_signals=True)

    @classmethod
    def shared(cls) -> EventLoop:
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout: float | None) -> Any:
        """Run a coroutine on the loop and wait for it; TimeoutError after `timeout` seconds (it is cancelled)."""
        import asyncio

        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except BaseException:  # a timeout or Ctrl-C in the waiting thread: nothing may keep running for nobody
            future.cancel()
            raise
