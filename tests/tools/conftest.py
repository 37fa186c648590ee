"""Fixtures shared by the tool tests."""

from support.unprivileged import shared_dir  # noqa: F401 - a fixture, found here by pytest
