"""The official SDK's import, without what the agent never uses, and what a request needs besides it.

Imported by the provider (client.py) and by the warm server's preload, which imports the SDK as a run would.
"""

from __future__ import annotations

from typing import Any

AIOHTTP_TRANSPORT = "anthropic._vendor.httpx_aiohttp"
"""The SDK's aiohttp transport, which it imports whenever aiohttp is installed (~0.2 s, a fifth of the SDK's
own import); the agent uses the synchronous client only."""
HTTP2 = "h2"
"""The HTTP/2 library, which the SDK's HTTP stack (httpcore2) imports with its first client whenever it is
installed (~0.1 s of a cold start); nothing of the agent's asks for HTTP/2, and without it the stack says so."""
UNUSED = (AIOHTTP_TRANSPORT, HTTP2)


def import_sdk() -> Any:
    """The `anthropic` package, without its aiohttp transport and HTTP/2: a module set to None in `sys.modules`
    is one the import system refuses, and the SDK and its HTTP stack fall back as they do where aiohttp and h2
    are not installed. (Only before the SDK's stack is loaded: once loaded, it has what it imported.)"""
    import sys

    if "anthropic" not in sys.modules and "httpcore2" not in sys.modules:
        for name in UNUSED:
            sys.modules.setdefault(name, None)
    import anthropic

    return anthropic


def load_request_path() -> None:
    """What a request needs besides the SDK (the retry policy, the reading of a reply, the events): loaded with
    it on the warm-up thread, so that a REPL's first request, sent after its prompt, finds them loaded."""
    import mini_agent.model.faults
    import mini_agent.model.reading
    import mini_agent.model.thinking
    import mini_agent.model.wellformed  # noqa: F401
