"""What the endpoint says about itself (its context window, its models, what they take), asked once per model: on
a thread of its own, so the answer is in before the SDK is imported, or recalled from an earlier run
(endpoint_memory.py). The provider (client.py) asks through this and waits for an answer only where it needs one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mini_agent import threads

if TYPE_CHECKING:
    from mini_agent.model.discovery import Discovery
    from mini_agent.model.endpoint_memory import EndpointMemory

Fetch = Callable[[str, str, "dict | None"], Any]
"""(method, path under the base URL, JSON body) -> the endpoint's JSON answer."""


class _Lookup:
    """One question to the endpoint about one model: done once answered (or not)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.found: Discovery | None = None


class EndpointLookups:
    """The answers per model: one lookup each, however many times the provider asks."""

    def __init__(self, family: str, fetch: Fetch, memory: EndpointMemory | None) -> None:
        self._family, self._fetch = family, fetch
        self._memory = memory
        """What remote endpoints said in earlier runs; None: ask every run."""
        self._asked: dict[str, _Lookup] = {}

    def ask(self, base_url: str, model: str) -> None:
        """Ask about `model` unless it was asked already. Not thread-safe: the provider calls it under its lock."""
        if model in self._asked:
            return
        lookup = self._asked[model] = _Lookup()
        remembered = self._memory.recall(base_url, model or None) if self._memory else None
        if remembered is not None:
            lookup.found = remembered
            lookup.done.set()
            return
        threads.start(self._discover, base_url, model, lookup, name="provider-discovery")

    def _discover(self, base_url: str, model: str, lookup: _Lookup) -> None:
        from mini_agent.model.discovery import discover

        try:
            lookup.found = discover(self._family, model or None, self._fetch)
        except Exception:  # no answer is an answer: settings and defaults decide
            pass
        finally:
            lookup.done.set()
        if lookup.found is not None and self._memory is not None:
            self._memory.keep(base_url, model or None, lookup.found)

    def said(self, model: str, wait: float = 0.0) -> Discovery:
        """What the endpoint said about `model`; `wait` seconds for the answer if it was asked."""
        lookup = self._asked.get(model)
        if lookup is not None and wait:
            lookup.done.wait(wait)
        if lookup is not None and lookup.found is not None:
            return lookup.found
        from mini_agent.model.discovery import Discovery

        return Discovery()

    def same_answer(self, model: str, as_for: str) -> None:
        """`model`'s answer is the one asked for `as_for` (a lookup without a model told of the first one served)."""
        self._asked.setdefault(model, self._asked[as_for])
