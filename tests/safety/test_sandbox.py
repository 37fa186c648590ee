"""The OS sandbox, with real processes: each mechanism present here (bubblewrap, and Landlock forced through
MINI_AGENT_SANDBOX) confines real commands over a fake project and a fake home under tmp_path."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support import HERE, PATIENCE, eventually

from mini_agent.processes.run import BoundedOutput, run_launched
from mini_agent.safety.sandbox import Confinement, blocked, confine, describe, mechanism, unavailable_reason
from mini_agent.safety.sandbox.confinement import Plan, plan
from mini_agent.safety.sandbox.landlock import FILE_RIGHTS, READ, carve
from mini_agent.safety.sandbox.seatbelt import profile
from mini_agent.tools.base import ToolContext, ToolRegistry
from mini_agent.tools.bash import bash

BIN = Path(sys.executable).parent / "mini-agent"
RUNNER = HERE / "sandbox_runner.py"
MARKER = "MINI_AGENT_SANDBOX_TEST_MARKER"


@pytest.fixture
def layout(tmp_path) -> dict[str, Path]:
    """A project with git internals and agent config, a fake home with keys, and a directory outside both."""
    project, home, outside = tmp_path / "project", tmp_path / "home", tmp_path / "outside"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".mini-agent").mkdir()
    (project / ".mini-agent" / "config.toml").write_text("[permissions]\n")
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (home / ".netrc").write_text("machine example.com password hunter2\n")
    (home / ".env").write_text("TOKEN=abc\n")
    (home / "notes.txt").write_text("readable\n")
    outside.mkdir()
    return {"project": project, "home": home, "outside": outside}


def confinement(layout, level, network=False) -> Confinement:
    return Confinement(level, layout["project"], network=network, home=layout["home"], shared_temp_dirs=())


def run(script: str, conf: Confinement, writable: tuple[Path, ...] = ()) -> tuple[str, int]:
    """`sh -c script` confined in the project, through run_captured as the bash tool runs it."""
    launch = confine(["sh", "-c", script], {"PATH": os.environ["PATH"]}, conf.root, conf, writable)
    output = BoundedOutput(50_000, 50_000)
    try:
        finished = run_launched(launch, conf.root, 60, output)
    finally:
        launch.cleanup()
    return output.head + output.tail, finished.returncode


# --- read-only level -------------------------------------------------------------------------------------------


def test_read_only_blocks_writes_in_the_project_but_not_in_tmpdir(forced, layout):
    conf = confinement(layout, "read-only")
    text, code = run('echo x > new.txt; echo y > "$TMPDIR/scratch" && cat "$TMPDIR/scratch"', conf)
    assert not (layout["project"] / "new.txt").exists()
    assert "y" in text.splitlines()
    assert blocked(text, code, conf) is not None
    text, code = run("echo hi > /dev/null && echo ok", conf)
    assert text.strip() == "ok" and code == 0
    assert blocked(text, code, conf) is None


def test_read_only_keeps_the_callers_extra_file_writable(forced, layout):
    report = layout["outside"] / "pwd-report"
    report.write_text("")
    text, code = run(f"pwd > {report}; echo x > {layout['outside']}/other", confinement(layout, "read-only"), (report,))
    assert report.read_text().strip() == str(layout["project"])
    assert not (layout["outside"] / "other").exists()


def test_read_only_hides_credentials(forced, layout):
    conf = confinement(layout, "read-only")
    text, code = run(
        "cat ~/.ssh/id_rsa; cat ~/.netrc; cat ~/.env; cat ~/notes.txt".replace("~", str(layout["home"])), conf
    )
    assert "PRIVATE KEY" not in text and "hunter2" not in text and "TOKEN" not in text
    assert "readable" in text
    assert blocked(text, code, conf) is not None


# --- workspace-write level -------------------------------------------------------------------------------------


def test_workspace_write_allows_the_root_and_tmpdir_only(forced, layout):
    conf = confinement(layout, "workspace-write")
    text, code = run(f'echo a > made.txt; mkdir -p sub && echo b > sub/f; echo c > "$TMPDIR/t"; '
                     f'echo d > {layout["outside"]}/x; echo e > {layout["home"]}/x', conf)  # fmt: skip
    assert (layout["project"] / "made.txt").read_text() == "a\n"
    assert (layout["project"] / "sub" / "f").read_text() == "b\n"
    assert not (layout["outside"] / "x").exists() and not (layout["home"] / "x").exists()
    assert blocked(text, code, conf) is not None


def test_workspace_write_allows_the_shared_temp_dir_by_default(forced, layout):
    conf = Confinement("workspace-write", layout["project"], home=layout["home"])  # /tmp (tmp_path is under it)
    run(f"echo d > {layout['outside']}/x", conf)
    assert (layout["outside"] / "x").read_text() == "d\n"


def test_workspace_write_keeps_git_hooks_config_and_agent_config_read_only(forced, layout):
    if forced == "landlock":
        assert any("NOT kept read-only" in limit for limit in describe(layout["project"], layout["home"])["limits"])
        pytest.skip("Landlock only grants: it cannot keep a path read-only inside the writable root (a stated limit)")
    (layout["project"] / ".claude" / "commands").mkdir(parents=True)
    (layout["project"] / ".claude" / "commands" / "ship.md").write_text("Ship it.\n")
    (layout["project"] / ".mcp.json").write_text("{}\n")
    conf = confinement(layout, "workspace-write")
    text, code = run("echo evil > .git/hooks/pre-commit; echo evil >> .git/config; echo x > .mini-agent/config.toml; "
                     "echo x > .claude/commands/ship.md; echo x > .claude/commands/new.md; echo x > .mcp.json; "
                     "echo x > .claude/settings.json; mkdir -p .claude/skills/s; "
                     "echo ok > fine.txt", conf)  # fmt: skip
    assert not (layout["project"] / ".git" / "hooks" / "pre-commit").exists()
    assert (layout["project"] / ".git" / "config").read_text() == "[core]\n"
    assert (layout["project"] / ".mini-agent" / "config.toml").read_text() == "[permissions]\n"
    assert (layout["project"] / ".claude" / "commands" / "ship.md").read_text() == "Ship it.\n"
    assert not (layout["project"] / ".claude" / "commands" / "new.md").exists()
    assert not (layout["project"] / ".claude" / "settings.json").exists()
    assert not (layout["project"] / ".claude" / "skills").exists()
    assert (layout["project"] / ".mcp.json").read_text() == "{}\n"
    assert (layout["project"] / "fine.txt").exists()
    assert "Read-only file system" in text
    assert "blocked a write to .git/hooks/pre-commit" in blocked(text, code, conf)


def test_changes_the_mechanism_could_not_block_are_reported(forced, layout):
    """Landlock cannot keep .git/hooks read-only, and no mechanism can protect a path that does not exist yet:
    the launch notices both after the run."""
    (layout["project"] / ".mini-agent" / "config.toml").unlink()
    (layout["project"] / ".mini-agent").rmdir()
    conf = confinement(layout, "workspace-write")
    script = (
        "mkdir -p .mini-agent && echo 'allow = [\"bash\"]' > .mini-agent/config.toml; echo ok > fine.txt; "
        "mkdir -p .claude/commands && echo 'allowed-tools: bash' > .claude/commands/x.md; echo '{}' > .mcp.json"
    )
    if forced == "landlock":
        script += "; echo evil > .git/hooks/pre-commit"
    launch = confine(["sh", "-c", script], {"PATH": os.environ["PATH"]}, conf.root, conf)
    try:
        run_launched(launch, conf.root, 60, BoundedOutput(1000, 1000))
        changes = set(launch.protected_changes())
        git = launch.git_changes()
    finally:
        launch.cleanup()
    project = layout["project"].resolve()
    assert project / ".mini-agent" in changes and project / "fine.txt" not in changes
    assert project / ".mcp.json" in changes and project / ".claude" in changes
    assert (".git/hooks" in git.put_back) == (forced == "landlock")  # and put back as it was: empty
    assert not (project / ".git" / "hooks" / "pre-commit").exists()


def test_workspace_write_hides_credentials_and_the_callers_paths(forced, layout):
    data = layout["outside"] / "agent-data"
    (data / "sessions").mkdir(parents=True)
    (data / "sessions" / "s.jsonl").write_text("session secret\n")
    conf = Confinement(
        "workspace-write", layout["project"], home=layout["home"], hidden_paths=(data,), shared_temp_dirs=()
    )
    text, code = run(
        f"cat {layout['home']}/.ssh/id_rsa; cat {data}/sessions/s.jsonl; cat {layout['home']}/.netrc", conf
    )
    assert "PRIVATE KEY" not in text and "session secret" not in text and "hunter2" not in text
    assert "Permission denied" in text
    assert blocked(text, code, conf) is not None


def test_env_files_in_the_roots_ancestors_are_hidden_but_the_projects_own_is_not(forced, layout, tmp_path):
    (tmp_path / ".env.production").write_text("DB_PASSWORD=ancestor\n")
    (layout["project"] / ".env").write_text("OWN=1\n")
    text, _ = run(f"cat {tmp_path}/.env.production; cat .env", confinement(layout, "workspace-write"))
    assert "ancestor" not in text
    assert "OWN=1" in text


# --- network ---------------------------------------------------------------------------------------------------


@pytest.fixture
def listener():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def test_network_is_off_unless_granted(forced, layout, listener):
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    conf = confinement(layout, "workspace-write")
    launch_text, code = run(f"bash -c '{connect}'", conf)
    assert "connected" not in launch_text and code != 0
    assert "Network access is off" in blocked(launch_text, code, conf)
    text, code = run(f"bash -c '{connect}'", confinement(layout, "workspace-write", network=True))
    assert "connected" in text and code == 0


# --- the agent's process ---------------------------------------------------------------------------------------


def runner(layout, argv: list[str], level="workspace-write", **popen) -> subprocess.Popen:
    """The runner as a separate process standing for the agent, with a marker in its own environment."""
    spec = {"level": level, "root": str(layout["project"]), "home": str(layout["home"]), "argv": argv}
    # TMPDIR under tmp_path: a runner killed with SIGKILL cannot remove its private temp dir itself.
    env = {**os.environ, MARKER: "agent-only-value", "TMPDIR": str(layout["outside"])}
    return subprocess.Popen([sys.executable, str(RUNNER), json.dumps(spec)], env=env, **popen)


def test_the_agents_environment_is_not_readable_inside(forced, layout):
    pid_file = layout["project"] / "agent.pid"
    script = (f"while [ ! -s {pid_file} ]; do sleep 0.05; done; cat /proc/$(cat {pid_file})/environ; "
              f"kill -CONT $(cat {pid_file}) && echo signalled; "
              "for p in /proc/[0-9]*; do cat $p/environ; done; env")  # fmt: skip
    process = runner(layout, ["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    pid_file.write_text(str(process.pid))
    out, _ = process.communicate(timeout=PATIENCE)
    text = out.decode(errors="replace")
    assert "PATH=" in text  # the command ran and printed its own environment
    assert MARKER not in text
    assert "signalled" not in text  # nor can it signal the agent


def test_background_children_die_when_the_agent_is_killed(forced, layout):
    seconds = f"{random.randint(100_000, 999_999)}"
    started = layout["project"] / "started"
    process = runner(layout, ["sh", "-c", f"sleep {seconds} & echo up > {started}; wait"], stdout=subprocess.DEVNULL)
    try:
        eventually(started.exists, "the command to start")
        eventually(lambda: _sleepers(seconds), "the background sleep to be running")  # sh forks, then sleep execs
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    eventually(lambda: not _sleepers(seconds), "the background child to die")


def _sleepers(seconds: str) -> list[int]:
    wanted = f"sleep\0{seconds}\0".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    if cmdline.read() == wanted and _state(entry) != "Z":
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _state(pid: str) -> str:
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[-1].split()[0]


# --- blocked() on the texts other tools print ------------------------------------------------------------------


def test_blocked_recognises_the_usual_error_texts(tmp_path):
    conf = Confinement("workspace-write", tmp_path)
    assert "blocked a write to /etc/x" in blocked("touch: cannot touch '/etc/x': Read-only file system", 1, conf)
    assert "/home/u/.ssh/id_rsa" in blocked("cat: /home/u/.ssh/id_rsa: Permission denied", 1, conf)
    assert "/x/.ssh" in blocked("ls: cannot open directory '/x/.ssh': Permission denied", 2, conf)
    assert "'/q'" not in blocked("PermissionError: [Errno 13] Permission denied: '/q'", 1, conf)
    assert "Network" in blocked("curl: (6) Could not resolve host: example.com", 6, conf)
    assert "Network" in blocked("OSError: [Errno 101] Network is unreachable", 1, conf)
    assert "Network" in blocked("curl: (7) Failed to connect to pypi.org port 443 after 2 ms", 7, conf)
    assert blocked("fatal: unable to access 'https://github.com/x/y/': Could not resolve host", 128, conf)
    assert blocked("all good\n", 0, conf) is None
    assert (
        blocked("curl: (6) Could not resolve host: example.com", 6, Confinement("read-only", tmp_path, network=True))
        is None
    )


# --- the plan and the mechanisms' own translations -------------------------------------------------------------


def test_plan_lists_only_existing_protected_and_hidden_paths(layout, tmp_path):
    conf = confinement(layout, "workspace-write")
    resolved = plan(conf, tmp_path / "private")
    project, home = layout["project"].resolve(), layout["home"].resolve()
    assert set(resolved.read_only) == {project / ".git/hooks", project / ".git/config", project / ".mini-agent"}
    assert {home / ".ssh", home / ".netrc", home / ".env"} <= set(resolved.hidden)
    assert project in resolved.writable and tmp_path / "private" in resolved.writable
    assert plan(confinement(layout, "read-only"), tmp_path / "private").writable == (tmp_path / "private",)


def test_a_session_in_home_keeps_its_own_env_file_but_not_the_keys(layout, tmp_path):
    home = layout["home"].resolve()
    hidden = plan(Confinement("workspace-write", home, home=home), tmp_path / "private").hidden
    assert home / ".ssh" in hidden and home / ".env" not in hidden


def test_describe_states_the_mechanism_and_its_limits(forced, layout):
    record = describe(layout["project"], layout["home"])
    assert record["mechanism"] == forced and record["detail"]
    assert str(layout["home"].resolve() / ".ssh") in record["levels"]["read-only"]["hidden"]
    assert any("services' sockets" in limit for limit in record["limits"])
    assert record["seccomp"]["loaded"] or any("No seccomp filter" in limit for limit in record["limits"])
    json.dumps(record)


def test_nested_hidden_paths_keep_only_the_outermost(layout, tmp_path):
    data = layout["home"] / ".local" / "share"
    (data / "keyrings").mkdir(parents=True)
    conf = Confinement("read-only", layout["project"], home=layout["home"], hidden_paths=(data,))
    hidden = plan(conf, tmp_path / "private").hidden
    assert data.resolve() in hidden and (data / "keyrings").resolve() not in hidden


def test_landlock_carving_grants_siblings_but_never_the_hidden_path(layout):
    home = layout["home"].resolve()
    rules = carve([(Path(layout["outside"]).parent.resolve(), READ)], (home / ".ssh", home / ".netrc"))
    paths = {path: rights for path, rights in rules}
    assert home / ".ssh" not in paths and home / ".netrc" not in paths
    assert paths[home / "notes.txt"] == READ and paths[layout["project"].resolve()] == READ
    assert paths[home] & FILE_RIGHTS == 0  # on the way: listing only, nothing beneath readable through it


def _plan(tmp_path: Path, **changes) -> Plan:
    base = {
        "level": "workspace-write",
        "network": False,
        "root": tmp_path,
        "tmpdir": tmp_path / "t",
        "writable": (tmp_path, tmp_path / "t"),
        "read_only": (tmp_path / ".git/hooks",),
        "hidden": (Path("/Users/u/.ssh"),),
    }
    return Plan(**{**base, **changes})


def test_seatbelt_profile_denies_by_default_and_passes_paths_as_parameters(tmp_path):
    text, params = profile(_plan(tmp_path))
    assert text.startswith("(version 1)\n(deny default)")
    assert "(deny file-write*)" in text
    assert '(allow file-write* (subpath (param "WRITABLE_0"))' in text
    assert params["WRITABLE_0"] == str(tmp_path) and params["HIDDEN_0"] == "/Users/u/.ssh"
    assert '(deny file-read* (subpath (param "HIDDEN_0")))' in text
    assert '(deny file-write* (subpath (param "READONLY_0")))' in text
    assert text.index("(allow file-write*") < text.index('(deny file-write* (subpath (param "READONLY_0")))')
    assert "network" not in text.replace("(deny default)", "")
    assert "(allow network* system-socket)" in profile(_plan(tmp_path, network=True))[0]


def test_seatbelt_profile_text_never_contains_a_path(tmp_path):
    odd = tmp_path / 'we") (allow default) ("ird'
    text, params = profile(_plan(tmp_path, root=odd, writable=(odd,), read_only=(), hidden=()))
    assert "allow default" not in text and str(odd) in params.values()


@pytest.mark.skipif(sys.platform != "darwin", reason="sandbox-exec exists only on macOS")
def test_seatbelt_really_blocks_a_write(tmp_path, monkeypatch):
    monkeypatch.setenv("MINI_AGENT_SANDBOX", "seatbelt")
    conf = Confinement("read-only", tmp_path, home=tmp_path / "home")
    text, code = run("echo x > here.txt", conf)
    assert code != 0 and not (tmp_path / "here.txt").exists()


def test_off_means_no_mechanism_and_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("MINI_AGENT_SANDBOX", "off")
    assert mechanism() is None and "off" in unavailable_reason()
    assert describe(tmp_path)["mechanism"] is None
    from mini_agent.safety.sandbox import SandboxUnavailable

    with pytest.raises(SandboxUnavailable):
        confine(["true"], {}, tmp_path, Confinement("read-only", tmp_path))


# --- the command line ------------------------------------------------------------------------------------------


def test_cli_json_names_the_mechanism(layout):
    done = subprocess.run(
        [BIN, "sandbox", "--json"], cwd=layout["project"], capture_output=True, text=True, timeout=PATIENCE
    )
    record = json.loads(done.stdout)
    expected = mechanism()
    assert record["mechanism"] == (expected.name if expected else None)
    assert set(record["levels"]) == {"read-only", "workspace-write"}


@pytest.mark.skipif(mechanism() is None, reason=f"no sandbox here: {unavailable_reason()}")
def test_cli_run_confines_the_command(layout):
    done = subprocess.run([BIN, "sandbox", "run", "--level", "read-only", "--", "sh", "-c", "echo x > made.txt"],
                          cwd=layout["project"], capture_output=True, text=True, timeout=PATIENCE)  # fmt: skip
    assert done.returncode != 0 and not (layout["project"] / "made.txt").exists()
    done = subprocess.run([BIN, "sandbox", "run", "--", "sh", "-c", "echo x > made.txt; exit 7"],
                          cwd=layout["project"], capture_output=True, text=True, timeout=PATIENCE)  # fmt: skip
    assert done.returncode == 7 and (layout["project"] / "made.txt").exists()


@pytest.mark.skipif(mechanism() is None, reason=f"no sandbox here: {unavailable_reason()}")
def test_cli_confines_as_the_agent_does_its_config_and_data_out_of_reach(layout):
    """`sandbox` and `sandbox run` use the agent's own confinement: its home (config, sessions) is hidden even
    inside the writable project."""
    agent_home = layout["project"] / "agent-home"
    agent_home.mkdir()
    (agent_home / "config.toml").write_text("[permissions]\n")
    env = {**os.environ, "MINI_AGENT_HOME": str(agent_home)}
    record = json.loads(
        subprocess.run(
            [BIN, "sandbox", "--json"], cwd=layout["project"], env=env, capture_output=True, text=True, timeout=PATIENCE
        ).stdout  # fmt: skip
    )
    assert str(agent_home.resolve()) in record["levels"]["workspace-write"]["hidden"]
    done = subprocess.run([BIN, "sandbox", "run", "--", "sh", "-c", "echo '[x]' >> agent-home/config.toml"],
                          cwd=layout["project"], env=env, capture_output=True, text=True, timeout=PATIENCE)  # fmt: skip
    assert done.returncode != 0 and (agent_home / "config.toml").read_text() == "[permissions]\n"


def test_every_confined_command_runs_with_no_new_privs(forced, layout):
    """What the warm server and its client check to deal with no sandboxed process (mini_agent/warm/protocol.py),
    since Landlock cannot hide the /tmp fallback of their socket directory."""
    for level in ("read-only", "workspace-write"):
        text, code = run("grep NoNewPrivs /proc/self/status", Confinement(level, layout["project"]))
        assert (code, text.split()) == (0, ["NoNewPrivs:", "1"]), level


def test_a_command_cannot_reach_or_plant_the_warm_servers_socket(forced, layout, tmp_path, monkeypatch):
    from mini_agent.cli.config import from_environment
    from mini_agent.warm.paths import runtime_dir

    if forced == "landlock":  # it can only grant: inside the writable /tmp it cannot take writing away (README)
        pytest.skip("Landlock cannot protect a directory inside a writable one; tests' runtime dirs are in /tmp")
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    settings = from_environment({"MINI_AGENT_HOME": str(tmp_path / "agent-home")}, cwd=layout["project"])
    conf = Confinement.for_agent("workspace-write", layout["project"], settings)
    socket_dir = Path(runtime_dir())
    assert socket_dir in conf.hidden_paths  # made before any command runs: none can make it first
    (socket_dir / "planted-before").write_text("x")
    # a listener planted there would receive the next invocation's environment (the key) and terminal
    text, code = run(f"ls {socket_dir}; touch {socket_dir}/s.sock && echo planted", conf)
    assert "planted" not in text.replace("planted-before", "") and "planted-before" not in text
    assert not (socket_dir / "s.sock").exists()


# --- nothing a confined command started outlives its call -----------------------------------------------------

ESCAPES = {
    # A new session and an empty environment: out of the group and without the watchdog's token.
    "setsid": "setsid env -i sh -c {loop} &",
    # Its parent exits at once: the loop is an orphan, re-parented away from the command's shell.
    "double-fork": "(env -i setsid sh -c {loop} &) &",
}


@pytest.fixture(params=["cgroup", "subreaper"])
def reaping(request, forced, monkeypatch) -> str:
    """Both ways of finding what a command started: a cgroup where one is writable, the subreaper elsewhere
    (bubblewrap needs neither: its PID namespace)."""
    from mini_agent.processes import cgroups

    if forced == "bubblewrap":
        if request.param != "cgroup":
            pytest.skip("bubblewrap's PID namespace holds everything the command started")
    elif request.param == "subreaper":
        monkeypatch.setattr(cgroups, "home", lambda: None)
    else:  # as where cgroup2 is mounted with favordynmods (here moves may just be slower)
        monkeypatch.setattr(cgroups, "cheap_moves", lambda: True)
        monkeypatch.setattr(cgroups, "_homes", {})
        if cgroups.home() is None:
            pytest.skip("no writable cgroup v2 here")
    return request.param


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_nothing_a_confined_command_started_outlives_the_call(forced, reaping, layout, escape):
    token = f"mini-agent-escape-{random.randint(10**8, 10**9)}"
    victim = layout["project"] / "victim"
    # The token rides in the loop's own command line, which is how the test finds what is left of it.
    loop = f"': {token}; while :; do date >> {victim}; sleep 0.05; done'"
    script = ESCAPES[escape].format(loop=loop) + f"\nwhile [ ! -s {victim} ]; do sleep 0.01; done; echo started"
    try:
        conf = confinement(layout, "workspace-write")
        result = ToolRegistry([bash]).call("bash", {"command": script}, ToolContext(cwd=conf.root, confinement=conf))
        assert "started" in result.content and not result.is_error, result.content
        eventually(lambda: not _carrying(token), "everything the command started to be gone")
        size = victim.stat().st_size
        assert not _carrying(token) and victim.stat().st_size == size
    finally:
        for pid in _carrying(token):
            os.kill(pid, signal.SIGKILL)


def _carrying(token: str) -> list[int]:
    """Live processes with `token` in their command line."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    if token.encode() in cmdline.read() and _state(entry) != "Z":
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_the_sweep_spares_a_confined_process_the_agent_started_itself(layout, monkeypatch):
    """The subreaper's sweep kills orphans with no_new_privs, never the agent's own confined children (a `git
    status` for the context, another call's shell) that happen to run when a command ends."""
    from mini_agent.processes import cgroups
    from mini_agent.processes import tree as process_tree

    monkeypatch.setenv("MINI_AGENT_SANDBOX", "landlock")
    if mechanism() is None:
        pytest.skip(f"landlock is not available here: {unavailable_reason()}")
    monkeypatch.setattr(cgroups, "home", lambda: None)
    conf = confinement(layout, "read-only")
    launch = confine(["sleep", "600"], {"PATH": os.environ["PATH"]}, conf.root, conf)
    own = process_tree.Lineage()
    try:
        process = own.spawn(launch.argv, launch.preexec_fn, env=launch.env, cwd=conf.root, pass_fds=launch.pass_fds)
        text, code = run("setsid sleep 600 & echo ok", conf)
        assert "ok" in text and code == 0
        assert process.poll() is None, "the sweep killed a process the agent started itself"
    finally:
        own.kill(grace=0)
        own.close()
        launch.cleanup()


@pytest.mark.parametrize("level", ["read-only", "workspace-write"])
def test_a_confined_command_cannot_write_to_or_type_into_the_users_terminal(forced, layout, level):
    leader, follower = os.openpty()  # a terminal of the user's, as the agent's own is
    try:
        terminal = os.ttyname(follower)
        text, _ = run(f"printf '\\033]52;c;ZWNobyBoaQ==\\a' > {terminal} && echo wrote", confinement(layout, level))
        assert "wrote" not in text
        os.set_blocking(leader, False)
        with pytest.raises(BlockingIOError):
            os.read(leader, 100)  # nothing reached the terminal
        # TIOCSTI pushes keystrokes into a terminal's input: refused by the seccomp filter, on any terminal.
        script = (
            "import errno, fcntl, os, termios\n"
            "try:\n    leader, follower = os.openpty()\n"
            "except OSError:\n    print('no terminal to open')\n    raise SystemExit\n"
            "os.setsid()\n"
            "own = os.open(os.ttyname(follower), os.O_RDWR)  # now the controlling terminal, as a user's shell has\n"
            "try:\n    fcntl.ioctl(own, termios.TIOCSTI, b'x')\n    print('typed')\n"
            "except OSError as error:\n    print(errno.errorcode[error.errno])\n"
        )
        text, _ = run(
            f'{sys.executable} -c "$SCRIPT"'.replace("$SCRIPT", script.replace('"', '\\"')), confinement(layout, level)
        )
        if seccomp_loaded():
            assert text.strip().endswith(("EPERM", "no terminal to open")), text  # the filter's answer
    finally:
        os.close(leader)
        os.close(follower)


def seccomp_loaded() -> bool:
    from mini_agent.safety.sandbox import seccomp

    return seccomp.program() is not None
