"""MCP servers: the REPL prompt with three configured stdio servers (they start after the prompt, so it must be
as fast as without), a one-shot run's wait for a server before its first request, and a stdio server's
start-up and tool-call latency (a fresh interpreter per run: the SDK import is part of the first call)."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, FakeAnthropicAPI, Row, answer, child_env, failed_row, median, mini_agent_command, seconds

SERVER = ROOT / "tests" / "support" / "mcp_server.py"
PROBE = """
import sys, time
started = time.perf_counter()
from mini_agent.mcp.connection import Connection
from mini_agent.mcp.servers import ServerDef
connection = Connection(ServerDef("b", "user", "bench", "stdio", command=sys.executable, args=(sys.argv[1],)), print)
connection.start()
assert connection.wait_ready(60), connection.error
ready = time.perf_counter()
connection.call("echo", {"text": "x"})
first = time.perf_counter()
connection.call("echo", {"text": "y"})
print("TIMES", ready - started, first - ready, time.perf_counter() - first)
"""


def servers_toml(count: int) -> str:
    return "".join(
        f"[mcp_servers.s{index}]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(SERVER))}]\n"
        for index in range(count)
    )


def mcp_rows(runs: int) -> list[Row]:
    import _repl

    rows: list[Row] = []
    try:
        with tempfile.TemporaryDirectory(prefix="mini-agent-bench-mcp-") as tmp:
            base = Path(tmp)
            (base / "project").mkdir()
            home, bare = base / "agent-home", base / "agent-home-bare"
            home.mkdir()
            bare.mkdir()
            env = child_env(base / "home", ANTHROPIC_API_KEY="sk-bench-0123456789", MINI_AGENT_HOME=str(home))
            env["TERM"] = "xterm"
            floor: list[float] = []  # the libraries alone, between the launches: how fast the machine is just then

            def libraries() -> None:
                floor.append(_repl._libraries(env, base))

            (home / "config.toml").write_text(servers_toml(3))
            launches = [({**env, "MINI_AGENT_HOME": str(bare)}, base / "project", []), (env, base / "project", [])]
            plain, with_servers = _repl.interleaved(launches, runs, between=libraries)
            rows.append(_repl._row("REPL prompt ready, no MCP server", plain))
            rows.append(_repl._row("REPL prompt ready, 3 MCP stdio servers configured", with_servers))
            rows.append(
                Row(
                    f'`python -c "{_repl.LIBRARIES}"`, between those launches (reference)',
                    seconds(median(floor[1:])),
                    "—",
                    None,
                )
            )
            (home / "config.toml").write_text(servers_toml(1))
            rows.append(_first_request(env, base / "project", runs))
            rows.extend(_latency(env, runs))
            rows.extend(_schema_tokens(env, base / "project", home))
    except Exception as exc:
        rows.append(failed_row("MCP", "—", str(exc)))
    return rows


def _first_request(env: dict[str, str], cwd: Path, runs: int) -> Row:
    api = FakeAnthropicAPI().start()
    try:
        times = []
        for _ in range(runs + 1):
            api.script(answer("ok"))
            seen = len(api.requests)
            started = time.monotonic()
            done = subprocess.run(
                [mini_agent_command(), "-p", "hi"],
                env={**env, "ANTHROPIC_BASE_URL": api.url},
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=60,
            )
            assert done.returncode == 0, done.stderr.decode()
            first = next(r for r in api.requests[seen:] if r.method == "POST" and r.path.startswith("/v1/messages"))
            times.append(first.at - started)
        typical = median(times[1:])
        return Row("`-p` start → first request, 1 MCP stdio server (waited for)", seconds(typical), "—", None)
    finally:
        api.stop()


def _latency(env: dict[str, str], runs: int) -> list[Row]:
    samples = []
    for _ in range(runs + 1):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(SERVER)], env=env, capture_output=True, text=True, timeout=120
        )
        line = next(line for line in done.stdout.splitlines() if line.startswith("TIMES"))
        samples.append([float(value) for value in line.split()[1:]])
    ready, first, later = (median([sample[index] for sample in samples[1:]]) for index in range(3))
    return [
        Row("MCP stdio server: start → tools listed (SDK import included)", seconds(ready), "—", None),
        Row("MCP stdio server: first tool call", seconds(first), "—", None),
        Row("MCP stdio server: next tool call", seconds(later), "—", None),
    ]


def _schema_tokens(env: dict[str, str], cwd: Path, home: Path) -> list[Row]:
    """Tokens of the `tools` parameter of a request with a 155-tool server: every schema sent (the share set to
    1, as before tools were found on demand) and with the default share (tool_search until tools are found)."""
    from mini_agent.context.tokens import count

    config = servers_toml(1).replace("]\n", ']\nenv = { MCP_TEST_MANY_TOOLS = "144" }\n', 1)
    (home / "config.toml").write_text(f"mcp_timeout = 120\n{config}")
    rows = []
    for label, share in (("every schema sent (share 1)", "1"), ("found on demand (default share 0.1)", "0.1")):
        api = FakeAnthropicAPI().start()
        try:
            api.script(answer("ok"))
            done = subprocess.run(
                [mini_agent_command(), "-p", "hi"],
                env={**env, "ANTHROPIC_BASE_URL": api.url, "MINI_AGENT_MCP_SCHEMA_SHARE": share},
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr.decode()
            tools = api.message_requests[0]["tools"]
            tokens = count(json.dumps(tools, ensure_ascii=False))
            rows.append(
                Row(
                    f"155-tool MCP server: tool schemas per request, {label}",
                    f"{tokens:,} tokens ({len(tools)} tools)",
                    "—",
                    None,
                )
            )
        finally:
            api.stop()
    return rows
