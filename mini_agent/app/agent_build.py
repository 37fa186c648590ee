"""The REPL's agent, built behind its first prompt.

Building the agent (the tools and their schemas, the context machinery, the session's undo) was most of a cold
start before the prompt, and drawing the prompt needs none of it: the banner and the mode come from the
settings. So the REPL draws the prompt first and builds the agent in a background thread while the user starts
typing; the first thing that needs the agent (a turn, a slash command) waits for the build. What the build
reports (a notice about an agent file, say) is held until the prompt has returned, so that it never writes over
the line being typed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from mini_agent import threads

if TYPE_CHECKING:
    from mini_agent.agent import Agent
    from mini_agent.events import Emit, Event


class HeldEmit:
    """Passes events on, except while held: then they queue until `release`."""

    def __init__(self, target: Emit) -> None:
        self._target = target
        self._queue: list[Event] | None = []
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self._lock:
            if self._queue is not None:
                self._queue.append(event)
                return
        self._target(event)

    def release(self) -> None:
        with self._lock:
            queued, self._queue = self._queue or [], None
        for event in queued:
            self._target(event)


class AgentBuild:
    """One build of the agent, started once, on a thread of its own."""

    def __init__(self, build: Callable[[Emit], Agent], emit: Emit) -> None:
        self._build = build
        self.emit = HeldEmit(emit)
        self._agent: Agent | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._finished = False
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the build, once; never after `finish`."""
        with self._lock:
            if self._thread is not None or self._finished:
                return
            thread = threads.new(self._run, name="agent-build")
            thread.start()
            self._thread = thread  # only ever a started thread: another thread may join it at once

    def _run(self) -> None:
        try:
            self._agent = self._build(self.emit)
        except BaseException as exc:  # raised again on the main thread, by the first `agent()`
            self._error = exc

    @property
    def ready(self) -> Agent | None:
        """The agent if it is built; never waits."""
        return self._agent

    def wait(self) -> Agent | None:
        """The agent, once built (None if the build failed, or never began before `finish`); starts the build if
        nothing has. Safe inside the prompt: it shows nothing."""
        self.start()
        if self._thread is not None:
            self._thread.join()
        return self._agent

    def agent(self) -> Agent:
        """The agent for a turn or a command, outside the prompt: what the build reported is shown first, and a
        failed build raises its error here."""
        agent = self.wait()
        self.emit.release()
        if agent is None:
            raise self._error or RuntimeError("the agent could not be built")
        return agent

    def show_held(self) -> None:
        """Outside the prompt: what a finished build reported, without waiting for one under way."""
        if self._thread is not None and not self._thread.is_alive():
            self.emit.release()

    def finish(self) -> None:
        """On the way out: a build under way ends before the session is closed, and its reports are shown; one not
        begun yet never begins."""
        with self._lock:
            self._finished = True
        if self._thread is not None:
            self._thread.join()
        self.emit.release()
