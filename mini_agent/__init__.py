"""mini-agent: a terminal code agent for Anthropic-compatible endpoints."""

__version__ = "0.1.0"
