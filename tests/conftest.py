"""Shared fixtures: the loopback model, settings pointing at it, and a runner for the installed command."""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlparse

import hypothesis
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from support import (  # noqa: E402
    BIN,
    PATIENCE,
    TEST_KEY,
    shared_server,  # noqa: E402
)
from support.fake_api import FakeAnthropicAPI  # noqa: E402
from support.in_process import run_in_process, run_repl_in_process  # noqa: E402
from support.sandbox import forced  # noqa: E402, F401  a fixture: each Linux sandbox mechanism in turn
from support.shared_server import warm_env  # noqa: E402

from mini_agent.settings import Settings  # noqa: E402

# Hypothesis times its examples (a 200 ms deadline, a "too slow" health check): clocks a machine at load average 16
# misses, failing tests whose inputs were fine. What an example must not exceed is each test's own business.
hypothesis.settings.register_profile(
    "suite",
    deadline=None,
    suppress_health_check=[hypothesis.HealthCheck.too_slow],
)
hypothesis.settings.load_profile("suite")

# A shell starts background jobs with SIGINT ignored, and children inherit that: the Ctrl-C tests would then
# signal processes that cannot hear it. With a handler installed here, every child starts with the default.
signal.signal(signal.SIGINT, signal.default_int_handler)
# Likewise SIGHUP under `nohup`: the agent keeps a hang-up it was started ignoring (as a program run under nohup
# should), so the tests that hang it up would wait out its command instead.
if signal.getsignal(signal.SIGHUP) == signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)

# Nothing in the test suite may reach a real model: no real key, and an unreachable loopback default.
for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_MODEL"):
    os.environ.pop(variable, None)
os.environ["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"

# No test may reach the user's warm server, or leave one behind: the command runs the normal way unless a test
# opts in, and any server a test starts lives in this session's own runtime directory and is stopped at the end.
os.environ["MINI_AGENT_NO_SERVER"] = "1"
RUNTIME_DIR = tempfile.mkdtemp(prefix="ma-run-")
os.environ["XDG_RUNTIME_DIR"] = RUNTIME_DIR
# Every process that imports this file makes one (xdist's controller too, which runs no session fixture).
atexit.register(shutil.rmtree, RUNTIME_DIR, True)


SHARES_SERVER = shared_server.claim()
"""Whether this process made the run's shared warm-server directory (support/shared_server.py): the run's first
process, xdist's controller or the only one; the workers, started after this file was imported, inherit it."""


@pytest.fixture(scope="session", autouse=True)
def _no_warm_server_survives():
    yield
    from support.warm import stop_servers_in

    stop_servers_in(RUNTIME_DIR)
    shutil.rmtree(RUNTIME_DIR, ignore_errors=True)


def pytest_unconfigure(config):
    """The run's shared warm server, stopped by the process that made its directory, after every worker."""
    if SHARES_SERVER:
        shared_server.stop()


def require_loopback(url: str) -> str:
    host = urlparse(url).hostname
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise RuntimeError(f"tests may only talk to a loopback model, not {url}")
    return url


@pytest.fixture(autouse=True)
def _no_repl_outlives_its_test():
    yield
    from support.repl import SPAWNED, close_spawned

    if SPAWNED:
        close_spawned()


@pytest.fixture(autouse=True)
def _loopback_guard():
    yield
    require_loopback(os.environ.get("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"))


@pytest.fixture
def api():
    server = FakeAnthropicAPI().start()
    yield server
    server.stop()
    server.assert_complete()


@pytest.fixture
def settings_for(tmp_path):
    def make(api: FakeAnthropicAPI, **overrides) -> Settings:
        values = dict(
            base_url=require_loopback(api.url),
            api_key=TEST_KEY,
            model="claude-test",
            retry_base_delay=0.01,
            max_retries=2,
            request_timeout=10.0,
            stream_idle_timeout=10.0,
            cwd=tmp_path,
            user_dir=tmp_path / "mini-agent-home",
            data_dir=tmp_path / "mini-agent-home",
        )
        values.update(overrides)
        return Settings(**values)

    return make


@pytest.fixture
def run_cli(tmp_path):
    """Run `mini-agent ARGS` against a loopback model: in this process by default
    (mini_agent.cli.main.run_in_process, with the test's own streams, environment variables and working
    directory), the REPL with `typed=[lines]` (in process too: support/in_process.py), or, with
    `in_process=False`, the installed command as a subprocess (for what only a real process
    shows: tests/e2e/), handed to a warm server with `warm=True` when the process itself is not the subject."""

    def run(
        args: list[str],
        api: FakeAnthropicAPI | None = None,
        input: str | bytes | None = None,
        env: dict | None = None,
        cwd: Path | None = None,
        timeout: float = PATIENCE,
        in_process: bool = True,
        typed: list[str] | None = None,
        warm: bool = False,
    ) -> subprocess.CompletedProcess:
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "MINI_AGENT_"))}
        environment.update(
            {
                "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
                "MINI_AGENT_RETRY_BASE_DELAY": "0.01",
                "MINI_AGENT_MAX_RETRIES": "2",
                "NO_COLOR": "1",
                "MINI_AGENT_HOME": str(tmp_path / "mini-agent-home"),
                "MINI_AGENT_NO_SERVER": "1",  # tests of the warm start opt in with env={"MINI_AGENT_NO_SERVER": ""}
            }
        )
        if api is not None:
            environment.update(
                {
                    "ANTHROPIC_BASE_URL": require_loopback(api.url),
                    "ANTHROPIC_API_KEY": TEST_KEY,
                    "ANTHROPIC_MODEL": "claude-test",
                }
            )
        environment.update(env or {})
        require_loopback(environment["ANTHROPIC_BASE_URL"])
        data = input.encode() if isinstance(input, str) else input
        if typed is not None:  # the REPL, on what it takes for a terminal: these lines, then Ctrl-D
            return run_repl_in_process(args, typed, environment, cwd or tmp_path)
        if in_process:
            return run_in_process(args, data, environment, cwd or tmp_path)
        if warm:  # through the test process's warm server (support/shared_server.py)
            environment = warm_env(environment)
        return subprocess.run(
            [str(BIN), *args],
            input=data,
            capture_output=True,
            env=environment,
            cwd=cwd or tmp_path,
            timeout=timeout,
            stdin=None if data is not None else subprocess.DEVNULL,
        )

    return run


@pytest.fixture
def run_installed(run_cli):
    """`run_cli` as a subprocess: the installed command, for what only a real process shows (exit by signal,
    real pipes and encodings, start-up, the process tree)."""
    return functools.partial(run_cli, in_process=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test that used a real llama-server shows the end of that server's log."""
    outcome = yield
    report = outcome.get_result()
    servers = getattr(sys.modules.get("llama_server"), "RUNNING", ())
    if report.failed and servers:
        for server in servers:
            report.sections.append((f"llama-server -c {server.ctx} log ({server.log})", server.log_tail()))


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: two workers per core. A third of the suite's time is spent waiting on other processes (a pty's
    next line, a server coming up, a timeout under test), which one worker per core leaves the core idle through:
    on 2 cores, 340 s with two workers, 279 s with four."""
    return 2 * (os.cpu_count() or 1)


SLOW_FIRST = ("e2e", "mcp")
"""Directories whose files run longest (processes, real servers): handed out first, so that no worker starts a
long file when the others are nearly done (`--dist loadfile` deals files out in the order collected, with
`--no-loadscope-reorder` in pyproject.toml's addopts: by default xdist re-sorts them by their number of tests)."""


def pytest_collection_modifyitems(items):
    """Every test under tests/e2e/ starts the installed command (or a real third-party server): marked `e2e`, so
    `pytest -m "not e2e"` runs what runs in process. Files are ordered longest first (SLOW_FIRST, then the
    bigger file first), each file's tests kept together in their own order: the same order on every worker."""
    for item in items:
        if "e2e" in item.path.parts:
            item.add_marker(pytest.mark.e2e)
    position = {item: index for index, item in enumerate(items)}

    def longest_first(item) -> tuple:
        group = next((rank for rank, name in enumerate(SLOW_FIRST) if name in item.path.parts), len(SLOW_FIRST))
        return group, -_size(item.path), str(item.path), position[item]

    items.sort(key=longest_first)


@functools.cache
def _size(path: Path) -> int:
    return path.stat().st_size
