"""The REPL's agent built behind the prompt: one build, reports held until released, a failure raised where
the agent is first used."""

from __future__ import annotations

import threading

import pytest

from mini_agent.app.agent_build import AgentBuild
from mini_agent.errors import ConfigError


def test_one_build_however_often_it_is_started_and_its_reports_wait_for_release():
    shown, builds, gate = [], [], threading.Event()

    def build(emit):
        builds.append(1)
        emit("reported while building")
        gate.wait(10)
        return "agent"

    agent_build = AgentBuild(build, shown.append)
    agent_build.start()
    agent_build.start()
    assert agent_build.ready is None
    agent_build.show_held()  # still building: nothing shown, nothing waited for
    assert shown == []
    gate.set()
    assert agent_build.wait() == "agent"
    assert shown == [], "waiting (inside the prompt) shows nothing"
    assert agent_build.agent() == "agent"
    assert shown == ["reported while building"]
    agent_build.emit("after the build")
    assert shown == ["reported while building", "after the build"]
    assert builds == [1]


def test_a_failed_build_raises_its_error_where_the_agent_is_first_used():
    def build(emit):
        raise ConfigError("bad settings")

    agent_build = AgentBuild(build, lambda event: None)
    assert agent_build.wait() is None
    with pytest.raises(ConfigError, match="bad settings"):
        agent_build.agent()


def test_finish_waits_for_a_build_under_way_and_shows_what_it_reported():
    shown, started = [], threading.Event()

    def build(emit):
        started.set()
        emit("late")
        return "agent"

    agent_build = AgentBuild(build, shown.append)
    agent_build.finish()  # never started: nothing to wait for
    agent_build = AgentBuild(build, shown.append)
    agent_build.start()
    agent_build.finish()
    assert started.is_set() and shown == ["late"]


def test_a_build_not_begun_when_the_session_finishes_never_begins():
    builds = []
    agent_build = AgentBuild(lambda emit: builds.append(1) or "agent", lambda event: None)
    agent_build.finish()  # Ctrl-D before the work behind the first prompt began
    agent_build.start()  # that work's thread, a moment later
    assert agent_build.wait() is None and builds == []
