"""The user's local services are no way out (issue 21): a real tmux server, a real ssh-agent and a Unix-socket HTTP
service standing in for docker, each outside the project, stay out of reach of confined commands (seccomp
refuses the socket, the environment names none of them, bubblewrap covers their sockets), commands that talk to
them ask even in auto mode, and ordinary work (git commit, pytest, make) still runs in the sandbox."""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import PATIENCE
from support.fake_api import answer, tool_use

from mini_agent.processes.run import BoundedOutput, run_launched
from mini_agent.safety.sandbox import (
    ENV_VARIABLE,
    Confinement,
    confine,
    mechanism,
    seccomp,
    services,
    unavailable_reason,
)
from mini_agent.safety.shell import classify
from mini_agent.safety.shell.services import ALWAYS
from mini_agent.safety.workspace import Workspace

BIN = Path(sys.executable).parent / "mini-agent"
LINUX_MECHANISMS = ("bubblewrap", "landlock")
CONNECT = """\
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"POST /containers/create HTTP/1.0\\r\\n\\r\\n")
print("REACHED", s.recv(100))
"""


@pytest.fixture(params=LINUX_MECHANISMS)
def forced(request, monkeypatch) -> str:
    monkeypatch.setenv(ENV_VARIABLE, request.param)
    if mechanism() is None:
        pytest.skip(f"{request.param} is not available here: {unavailable_reason()}")
    return request.param


@pytest.fixture
def outside():
    """A fresh directory outside the project and outside /tmp, as a service's socket directory would be."""
    base = Path(tempfile.mkdtemp(prefix="mini-agent-service-", dir="/var/tmp"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        self.server.requests.append(self.path)  # type: ignore[attr-defined]
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"[]")

    do_POST = do_GET  # noqa: N815

    def address_string(self) -> str:
        return "unix"

    def log_message(self, *args) -> None:
        pass


class UnixHTTPService(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A tiny HTTP service on a Unix socket: docker's API as far as these tests care."""

    daemon_threads = True

    def __init__(self, path: str) -> None:
        super().__init__(path, _Handler)
        self.requests: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.shutdown()
        self.server_close()


@pytest.fixture
def service(outside):
    server = UnixHTTPService(str(outside / "docker.sock"))
    yield server
    server.close()


@pytest.fixture
def tmux_server(outside):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    sock = outside / "tmux.sock"
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-s", "victim"], check=True, timeout=PATIENCE)
    subprocess.run(["tmux", "-S", sock, "set-environment", "-g", "SERVICE_TOKEN", "tok-4f1d2a9c"], check=True)
    yield sock
    subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True, timeout=PATIENCE)


def run(script: list[str] | str, root: Path, env: dict[str, str] | None = None, level="workspace-write"):
    """A command confined as the bash tool confines it; its output and exit status."""
    argv = ["sh", "-c", script] if isinstance(script, str) else script
    conf = Confinement(level, root, home=root.parent / "home", shared_temp_dirs=())
    launch = confine(argv, {"PATH": os.environ["PATH"], **(env or {})}, root, conf)
    output = BoundedOutput(50_000, 50_000)
    try:
        finished = run_launched(launch, root, 120, output)
    finally:
        launch.cleanup()
    return output.head + output.tail, finished.returncode


# --- the seccomp filter: a script's own sockets ----------------------------------------------------------------


@pytest.mark.parametrize("level", ["read-only", "workspace-write"])
def test_a_script_cannot_connect_to_a_unix_socket_service(forced, project, service, level):
    (project / "connect.py").write_text(CONNECT)
    sock = service.server_address
    unconfined = subprocess.run([sys.executable, "connect.py", sock], cwd=project, capture_output=True, text=True)
    assert "REACHED" in unconfined.stdout, unconfined.stderr  # the service is there, and answers
    service.requests.clear()
    text, code = run([sys.executable, "connect.py", sock], project, level=level)
    assert code != 0 and "REACHED" not in text and "Operation not permitted" in text, text
    assert service.requests == []


def test_an_abstract_socket_is_out_of_reach_too(forced, project):
    name = f"\0mini-agent-test-{os.getpid()}"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(name)
    listener.listen()
    try:
        code = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({name!r}); print('REACHED')"
        text, status = run([sys.executable, "-c", code], project)
        assert status != 0 and "REACHED" not in text, text
    finally:
        listener.close()


def test_the_user_ssh_agent_cannot_be_used(forced, project, outside):
    if shutil.which("ssh-agent") is None or shutil.which("ssh-add") is None:
        pytest.skip("ssh-agent is not installed")
    sock = outside / "agent.sock"
    started = subprocess.run(
        ["ssh-agent", "-s", "-a", sock], capture_output=True, text=True, check=True, timeout=PATIENCE
    )
    pid = int(re.search(r"SSH_AGENT_PID=(\d+)", started.stdout).group(1))
    try:
        reachable = subprocess.run(
            ["ssh-add", "-l"], env={**os.environ, "SSH_AUTH_SOCK": str(sock)}, capture_output=True
        )
        assert reachable.returncode == 1, reachable  # 1: the agent answered (no identities); 2: no agent
        # passed on by the agent's environment, or named by the command itself: neither reaches it
        text, code = run("ssh-add -l; echo status=$?", project, env={"SSH_AUTH_SOCK": str(sock)})
        assert "status=2" in text, text
        text, code = run(f"SSH_AUTH_SOCK={sock} ssh-add -l; echo status=$?", project)
        assert "status=2" in text, text
    finally:
        os.kill(pid, 15)


def test_a_tmux_server_runs_nothing_for_a_confined_command(forced, project, tmux_server, outside):
    victim = outside / "victim"
    text, code = run(
        f"tmux -S {tmux_server} run-shell 'touch {victim}'; tmux -S {tmux_server} show-environment -g", project
    )
    assert code != 0 and "tok-4f1d2a9c" not in text, text
    assert not victim.exists()


def test_without_seccomp_bubblewrap_still_covers_the_service_sockets(monkeypatch, project, outside):
    """The layer beneath the filter: on a machine without libseccomp, the sockets named by the environment and
    those in the usual places (here $TMUX_TMPDIR/tmux-UID) are covered under bubblewrap."""
    monkeypatch.setenv(ENV_VARIABLE, "bubblewrap")
    if mechanism() is None:
        pytest.skip(f"bubblewrap is not available here: {unavailable_reason()}")
    monkeypatch.setattr(seccomp, "program", lambda: None)
    tmux_dir = outside / f"tmux-{os.getuid()}"
    tmux_dir.mkdir(mode=0o700)
    agent = socket.socket(socket.AF_UNIX)
    agent.bind(str(outside / "agent.sock"))
    multiplexer = socket.socket(socket.AF_UNIX)
    multiplexer.bind(str(tmux_dir / "default"))
    try:
        env = {"TMUX_TMPDIR": str(outside), "SSH_AUTH_SOCK": str(outside / "agent.sock")}
        text, _ = run(f"ls {tmux_dir}; cat {outside}/agent.sock; echo done", project, env=env)
        assert "default" not in text and "Permission denied" in text and "done" in text, text
        script = f"import socket; s = socket.socket(socket.AF_UNIX); s.connect({str(tmux_dir / 'default')!r})"
        text, code = run([sys.executable, "-c", script], project, env=env)
        assert code != 0, text
    finally:
        agent.close()
        multiplexer.close()


# --- the environment -------------------------------------------------------------------------------------------

SERVICE_VARIABLES = {
    "TMUX": "/tmp/tmux-1000/default,1234,0",
    "TMUX_PANE": "%0",
    "STY": "1234.pts-0.host",
    "SSH_AUTH_SOCK": "/tmp/ssh-abc/agent.1",
    "SSH_AGENT_PID": "1234",
    "GPG_AGENT_INFO": "/run/user/1000/gnupg/S.gpg-agent:0:1",
    "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
    "DOCKER_HOST": "unix:///run/user/1000/docker.sock",
    "CONTAINER_HOST": "unix:///run/user/1000/podman/podman.sock",
    "XDG_RUNTIME_DIR": "/run/user/1000",
    "WAYLAND_DISPLAY": "wayland-0",
    "DISPLAY": ":0",
    "KUBECONFIG": "/home/me/.kube/prod",
    "VSCODE_IPC_HOOK_CLI": "/run/user/1000/vscode-ipc.sock",
}


def test_a_confined_command_gets_no_variable_that_points_at_a_service(forced, project, service):
    env = {**SERVICE_VARIABLES, "MY_DAEMON": service.server_address, "KEEP_ME": "1", "HOME": str(project)}
    text, code = run("env", project, env=env)
    assert code == 0, text
    names = {line.split("=", 1)[0] for line in text.splitlines() if "=" in line}
    assert "KEEP_ME" in names and "HOME" in names
    assert not names & {*SERVICE_VARIABLES, "MY_DAEMON"}, names & {*SERVICE_VARIABLES, "MY_DAEMON"}


# --- ordinary work still runs ----------------------------------------------------------------------------------


def test_ordinary_work_runs_in_the_sandbox(forced, project):
    (project / "test_tiny.py").write_text("import multiprocessing\n\ndef test_adds():\n    assert 1 + 1 == 2\n")
    (project / "Makefile").write_text("all:\n\techo built > out.txt\n")
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    script = (
        "git init -q . && git add -A && git -c user.name=t -c user.email=t@example.com commit -qm first && "
        f"git log --oneline | wc -l && {sys.executable} -m pytest -q -p no:cacheprovider test_tiny.py && make -s && "
        "cat out.txt"
    )
    text, code = run(script, project, env={"HOME": str(home)})
    assert code == 0, text
    assert "1 passed" in text and "built" in text, text


# --- the classifier: asked before anything runs ----------------------------------------------------------------


def results(api, index):
    return api.message_requests[index]["messages"][-1]["content"]


def test_in_auto_mode_commands_that_reach_a_service_ask_and_nothing_reaches_it(
    run_cli, api, project, tmux_server, service, outside
):
    victim = outside / "victim"
    home = project.parent / "home"
    home.mkdir()
    # the path is inside the program, where no classifier looks: only the sandbox stops it
    (project / "deploy.py").write_text(CONNECT.replace("sys.argv[1]", repr(service.server_address)))
    commands = [
        f"tmux -S {tmux_server} run-shell 'touch {victim}'",
        f"tmux -S {tmux_server} show-environment -g",
        f"curl -s --unix-socket {service.server_address} -X POST http://docker/containers/create",
        f"{sys.executable} deploy.py",
    ]
    calls = [tool_use("bash", {"command": command}, id=f"call{i}") for i, command in enumerate(commands)]
    api.script(answer(*calls), answer("Done."))
    done = run_cli(["-p", "tidy up", "--permission-mode", "auto"], api, cwd=project, env={"HOME": str(home)})
    assert done.returncode == 4, done.stderr
    blocks = results(api, 1)
    for block, command in zip(blocks[:3], commands[:3], strict=True):
        assert block["is_error"] and "Not run" in block["content"], (command, block["content"])
        assert "local service" in block["content"], block["content"]
    if mechanism() is not None:  # the script is ordinary: it runs, confined, and the filter refuses its socket
        assert '<system_hint type="sandbox"' in blocks[3]["content"], blocks[3]["content"]
    assert not victim.exists() and service.requests == []
    assert "tok-4f1d2a9c" not in json.dumps(api.message_requests)


# --- what `mini-agent sandbox` says ----------------------------------------------------------------------------


@pytest.mark.skipif(mechanism() is None or seccomp.program() is None, reason="no sandbox or no seccomp here")
def test_the_sandbox_command_reports_the_filter(project):
    record = json.loads(
        subprocess.run([BIN, "sandbox", "--json"], cwd=project, capture_output=True, text=True, timeout=PATIENCE).stdout
    )
    assert record["seccomp"]["loaded"] and any("AF_UNIX" in item for item in record["seccomp"]["refuses"])
    shown = subprocess.run([BIN, "sandbox"], cwd=project, capture_output=True, text=True, timeout=PATIENCE).stdout
    assert "seccomp" in shown and "AF_UNIX" in shown


@pytest.mark.skipif(mechanism() is None, reason="no sandbox here")
def test_without_libseccomp_the_sandbox_says_so_and_commands_still_run(project, tmp_path):
    """pyseccomp raises RuntimeError when libseccomp is missing; a module doing just that takes its place."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pyseccomp.py").write_text('raise RuntimeError("Unable to find libseccomp")\n')
    env = {**os.environ, "PYTHONPATH": str(shadow)}
    record = json.loads(
        subprocess.run(
            [BIN, "sandbox", "--json"], cwd=project, env=env, capture_output=True, text=True, timeout=PATIENCE
        ).stdout  # fmt: skip
    )
    assert not record["seccomp"]["loaded"] and "libseccomp" in record["seccomp"]["unavailable_reason"]
    assert any("No seccomp filter" in limit for limit in record["limits"])
    done = subprocess.run([BIN, "sandbox", "run", "--", "sh", "-c", "echo ran"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=PATIENCE)  # fmt: skip
    assert done.returncode == 0 and "ran" in done.stdout, done.stderr


# --- invariants ------------------------------------------------------------------------------------------------

NAMES = st.from_regex(r"[A-Z][A-Z0-9_]{0,12}", fullmatch=True)
PLAIN = st.from_regex(r"[a-z0-9 .,=-]{0,20}", fullmatch=True)


@given(
    plain=st.dictionaries(NAMES, PLAIN, max_size=8),
    named=st.sets(st.sampled_from(sorted(services.SERVICE_VARIABLES)), max_size=6),
    addresses=st.dictionaries(NAMES, st.sampled_from(["unix:path=/x/bus", "unix:///run/d.sock", "http+unix://x"])),
)
def test_no_service_variable_survives_and_nothing_else_is_lost(plain, named, addresses):
    env = {**plain, **addresses, **dict.fromkeys(named, "1")}
    kept = services.environment(env)
    assert not set(kept) & (set(named) | set(addresses))
    assert {name: value for name, value in plain.items() if name not in named and name not in addresses} == kept


WRAPPERS = ["{}", "timeout 5 {}", "env FOO=1 {}", "nice -n 5 {}", "bash -c '{}'", "command {}", "x=1; {} && true"]
ARGUMENTS = st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,8}", fullmatch=True), max_size=4)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(ALWAYS)), arguments=ARGUMENTS, wrapper=st.sampled_from(WRAPPERS))
def test_a_service_command_asks_however_it_is_wrapped(tmp_path, name, arguments, wrapper):
    command = wrapper.format(" ".join([name, *arguments]))
    verdict = classify(command, Workspace(tmp_path))
    assert verdict.kind == "destructive", (command, verdict.reason)
