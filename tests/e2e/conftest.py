"""Fixtures for the end-to-end tests: the warm server's runtime directories (support/warm.py)."""

from support.warm import runtime, server_env, shared_runtime  # noqa: F401  fixtures, used by name
