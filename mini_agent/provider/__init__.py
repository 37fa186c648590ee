"""Talking to the model: requests and replies, the endpoint families, what an endpoint says about itself, the
assembly of a streamed reply, and what a failure means.

    replies.py    Request, Reply, and a reply in any server's shape made fit for the transcript
    client.py     the Provider protocol and AnthropicProvider (the official SDK)
    assembly.py   a reply rebuilt from stream events, gaps and all
    faults.py     a failure classified: retry, compact, or one clear line
    endpoints.py  presets (--provider) and endpoint families
    discovery.py  the context window and default model an endpoint reports
"""

from mini_agent.provider.client import AnthropicProvider, Provider
from mini_agent.provider.replies import Reply, Request

__all__ = ["AnthropicProvider", "Provider", "Reply", "Request"]
