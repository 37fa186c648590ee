"""Run a tool where file permissions apply: as the unprivileged `nobody` user when the tests run as root."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mini_agent.tools.base import ToolResult

NOBODY = 65534


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A directory another user can enter (pytest's tmp_path is private to root)."""
    directory = Path(tempfile.mkdtemp(prefix="mini-agent-perm-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory)


def as_unprivileged(action: Callable[[], ToolResult]) -> ToolResult:
    """Run `action` where file permissions apply: in a child process as `nobody` when we are root."""
    content, is_error = run_as_nobody(lambda: (lambda result: [result.content, result.is_error])(action()))
    return ToolResult(content, is_error)


def run_as_nobody(action: Callable[[], Any]) -> Any:
    """`action()` (returning JSON-able data) in a child process as `nobody` when we are root, else here."""
    if os.geteuid() != 0:
        return action()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: drop privileges, report the result as JSON, never return into pytest
        try:
            os.close(read_end)
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            payload = [action(), None]
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the test
            payload = [None, repr(exc)]
        with os.fdopen(write_end, "w") as stream:
            stream.write(json.dumps(payload))
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as stream:
        result, error = json.loads(stream.read())
    os.waitpid(pid, 0)
    if error is not None and "Operation not permitted" in error:
        pytest.skip("running as root without permission to switch users")
    assert error is None, f"child failed: {error}"
    return result
