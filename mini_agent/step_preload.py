"""What a turn will need, loaded while the first request is in flight, so that no step pays for it.

The shell classifier (its tables and the tree-sitter-bash grammar), the sandbox probe and its seccomp filter,
bash's watchdog helper and the tokenizer each cost tens to hundreds of milliseconds the first time, and mostly
hold the GIL.
Loaded lazily, they landed in the first step's gap; loaded at start-up, they would compete with the SDK
import the first request waits for. The model's latency is the idle time between the two: the provider calls
`PRELOAD.request_sent` as each request goes out (see `AnthropicProvider.on_sent`). The first request starts
what tools need, and the first tool call waits for it (`wait_for_tools`), by then loaded with any real model;
the second starts the rest, which only a run that goes on needs: a run that ends with its first reply never
loads it, and its exit does not wait on a thread still loading.

Imports nothing at module level; each part imports what it loads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from mini_agent import threads

TOOLS_WAIT = 10.0
"""Seconds a tool call waits for the preload of what tools need; past that, it loads lazily as before."""


def _shell() -> None:
    from mini_agent.safety.shell.classify import classify  # noqa: F401  (the classifier and its tables)
    from mini_agent.safety.shell.grammar import parser

    parser().parse(b"true")  # builds the grammar, shared by every thread's parser


def _watchdog() -> None:
    from mini_agent.processes.watchdog import watchdog

    watchdog().start()  # the helper that kills a command's processes with the agent: a Python process to start


def _sandbox() -> None:
    import mini_agent.safety.planted  # noqa: F401  (the watch for files a command plants, after each one)
    import mini_agent.warm.paths  # noqa: F401  (the confinement hides the warm server's directory)
    from mini_agent.safety.sandbox import mechanism, seccomp

    if mechanism() is not None:  # probed once per process, cached
        seccomp.program()  # compiled once per process (~20 ms), cached


def _tokenizer() -> None:
    from mini_agent.context.tokens import TOKENIZER

    TOKENIZER.wait()


FOR_TOOLS: tuple[Callable[[], None], ...] = (_shell, _sandbox, _watchdog)
"""What the built-in tools and the permission gate load on a first call; a tool call waits for these."""
LATER: tuple[Callable[[], None], ...] = (_tokenizer,)
"""Loaded once a second request is out; nothing waits for it: counting falls back to an estimate until the
tokenizer is in. web_fetch's httpx (~70 ms, with click and rich behind it) is left to its first call: most runs
never fetch, and loading it made a short run's exit slower."""


class Preload:
    """One background load per process (modules are process-wide); starting again is a no-op."""

    def __init__(self, for_tools=FOR_TOOLS, later=LATER) -> None:
        self._for_tools, self._later = for_tools, later
        self._also: list[Callable[[], None]] = []
        """Parts a session adds (the undo store's first snapshot), run after the tools' part; nothing waits here."""
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._later_wanted = threading.Event()
        self.tools_ready = threading.Event()
        self.done = threading.Event()

    def request_sent(self) -> None:
        """A model request went out: the first starts the tools' part, any later one the rest. Start-up is over
        then: the garbage collector, paused for it, runs again (gc_pause.py)."""
        from mini_agent import gc_pause

        gc_pause.resume()
        with self._lock:
            if self._thread is not None:
                self._later_wanted.set()
                return
            self._thread = threads.new(self._run, name="preload")
        self._thread.start()

    def also(self, part: Callable[[], None]) -> None:
        """Run `part` after what tools need, when the first request goes out (never, if that has gone already:
        the part only saves time, nothing may depend on it). Tool calls do not wait for it: what needs its work
        waits on its own terms (the undo store's first snapshot: UndoStack's lock)."""
        with self._lock:
            if self._thread is None:
                self._also.append(part)

    def wait_for_tools(self, timeout: float = TOOLS_WAIT) -> None:
        """Wait for the tools' part if it is loading; never started (a test's bare agent), nothing to wait for."""
        if self._thread is not None:
            self.tools_ready.wait(timeout)

    def _run(self) -> None:
        try:
            self._each(self._for_tools)
        finally:
            self.tools_ready.set()
        self._each(tuple(self._also))
        self._later_wanted.wait()
        try:
            self._each(self._later)
        finally:
            self.done.set()

    @staticmethod
    def _each(parts: tuple[Callable[[], None], ...]) -> None:
        for part in parts:
            try:
                part()
            except Exception:  # a part that cannot load fails later where it is used, with its own message
                pass


PRELOAD = Preload()
