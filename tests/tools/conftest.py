"""Fixtures shared by the tool tests."""

from unprivileged import shared_dir  # noqa: F401 - a fixture, found here by pytest
