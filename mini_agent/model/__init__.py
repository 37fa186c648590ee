"""Talking to the model: requests and replies, the endpoint families, what an endpoint says about itself, the
assembly of a streamed reply, what a failure means, and what the tokens cost.

    replies.py    Request, Reply, and a reply in any server's shape made fit for the transcript
    client.py     the Provider protocol and AnthropicProvider (the official SDK); its warm-up loads the rest
    sdk.py        the SDK imported without its aiohttp transport and HTTP/2; what a request needs besides it
    reading.py    a reply from what the endpoint sent: server-sent events or a whole JSON body
    assembly.py   a reply rebuilt from stream events, gaps and all
    faults.py     a failure classified: retry, compact, or one clear line
    endpoints.py  presets (--provider), endpoint families, whether anything answers at a URL
    discovery.py  the context window and default model an endpoint reports
    lookups.py    those answers per model: asked once, on a thread of their own, or remembered (endpoint_memory.py)
    messages.py   helpers over message params (the API's own shapes), the moving cache breakpoint
    pricing.py    prices per model for /cost and the status line
    thinking.py   which model takes which thinking, what an effort level sends, what a refusal changes

May import what sits below it: hooks, events, tools, settings, safety and the leaves (usage.py: token usage as the
API reports it; xmltext.py: system_hint). Never context/, mcp/, ui/ or the agent. The SDK is imported on first use,
never when this package is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mini_agent.model.client import AnthropicProvider, Provider
    from mini_agent.model.replies import Reply, Request

__all__ = ["AnthropicProvider", "Provider", "Reply", "Request"]
_HOMES = {"AnthropicProvider": "client", "Provider": "client", "Reply": "replies", "Request": "replies"}


def __getattr__(name: str) -> object:
    """Loaded on first use: the config reads the presets (endpoints.py) at start-up without the client."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{_HOMES[name]}"), name)
