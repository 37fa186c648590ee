"""The OS sandbox's mechanisms, each forced in turn (a fixture for tests that must hold under both)."""

from __future__ import annotations

import pytest

from mini_agent.safety.sandbox import mechanism, unavailable_reason

LINUX_MECHANISMS = ("bubblewrap", "landlock")


@pytest.fixture(params=LINUX_MECHANISMS)
def forced(request, monkeypatch) -> str:
    """Each Linux mechanism in turn, forced; skipped where it does not work."""
    monkeypatch.setenv("MINI_AGENT_SANDBOX", request.param)
    if mechanism() is None:
        pytest.skip(f"{request.param} is not available here: {unavailable_reason()}")
    return request.param
