"""The processes bash calls start die with the agent, however the agent dies (kill -9 and the OOM killer included).

Each command runs in a process group of its own (so a timeout or Ctrl-C can kill all of it), which also means
nothing kills it when the agent disappears: a `server &` or a runaway loop would live on. So on the first bash
call (nothing at start-up) the agent starts this module as a small helper process, in a session of its own so
that signals aimed at the agent's terminal or process group miss it. The helper holds the read end of a pipe
whose write end only the agent has. The agent writes the id of each process group it starts (a few bytes per
call); the helper forgets groups that have emptied (their id could be reused). When the pipe reaches end of
file, the agent is gone, whatever the reason: the helper SIGKILLs every group it knows, then every process that
still carries the agent's token in its environment (`MINI_AGENT_WATCH`; Linux, /proc), which catches children
that left their group with `setsid`, and exits.

The agent also sends the path of its cgroup (processes/tree.py), when it has one: every contained command ran in a
cgroup beneath it, and the helper kills that whole subtree (`cgroup.kill`) and removes it.

Limit: a process that leaves its group *and* drops the token from its environment (`env -i setsid ...`), or
that some other service starts on the agent's behalf (systemd-run, a container runtime), is not the agent's to
find; a sandbox's PID namespace or the agent's cgroup covers those.

The file runs as the helper with `python -I -S _watchdog.py` and then imports only the standard library.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading

TOKEN_VARIABLE = "MINI_AGENT_WATCH"
PRUNE_INTERVAL = 1.0
"""Seconds between the helper's checks for groups that have emptied, whose ids the kernel may hand out again."""
SCAN_ROUNDS = 3
"""Environment scans after the group kill: a process forking at that instant may add a child the first missed."""


class Watchdog:
    """The agent's side: the token its commands carry, and the pipe to the helper, opened on first use."""

    def __init__(self) -> None:
        self.token = os.urandom(16).hex()
        self._lock = threading.Lock()
        self._pipe: int | None = None
        self._helper: subprocess.Popen | None = None

    def environment(self) -> dict[str, str]:
        """What a command's environment must carry so the helper can find it after it left its group."""
        return {TOKEN_VARIABLE: self.token}

    def watch(self, group: int) -> None:
        """Have the group killed when the agent dies. Never raises: a missing helper must not cost the call."""
        if group <= 1 or group == os.getpgrp():
            return  # never the agent's own group, nor init's or "every process" (-1)
        line = b"%d\n" % group
        with self._lock:
            try:
                self._send(line)
            except OSError:  # the helper died (someone killed it): start another
                self._close()
                try:
                    self._send(line)
                except OSError:
                    self._close()  # no helper possible (no fork, no interpreter): the next call tries again
            # Groups told to a helper that died are not told again: their ids may belong to someone else by now,
            # and what they still run carries the token, which the new helper looks for.

    def watch_cgroup(self, path) -> None:
        """Have the cgroup directory `path` (and the cgroups beneath it) killed and removed when the agent dies."""
        with self._lock:
            try:
                self._send(os.fsencode(path) + b"\n")
            except OSError:
                self._close()

    def start(self) -> None:
        """Start the helper ahead of the first command (see preload.py), so that command does not wait for it."""
        with self._lock:
            if self._pipe is None:
                try:
                    self._start()
                except OSError:
                    pass  # the first watched group tries again

    def _send(self, data: bytes) -> None:
        if self._pipe is None:
            self._start()
        assert self._pipe is not None
        os.write(self._pipe, data)

    def _start(self) -> None:
        read_end, write_end = os.pipe()  # both close on exec: no command we run inherits the write end
        try:
            environment = {key: value for key, value in os.environ.items() if key != TOKEN_VARIABLE}
            self._helper = subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__), self.token],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                env=environment,
                start_new_session=True,
            )
        except BaseException:
            os.close(write_end)
            raise
        finally:
            os.close(read_end)
        self._pipe = write_end

    def _close(self) -> None:
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None
        if self._helper is not None:
            self._helper.poll()  # reap it if it died
            self._helper = None


_instance: tuple[int, Watchdog] | None = None
_instance_lock = threading.Lock()


def watchdog() -> Watchdog:
    """The process's one watchdog, created on first use (its helper starts with the first watched group)."""
    global _instance
    with _instance_lock:
        if _instance is None or _instance[0] != os.getpid():
            _instance = (os.getpid(), Watchdog())  # a forked child gets its own, not its parent's pipe
        return _instance[1]


def release() -> None:
    """What this process's end does to its watch: the helper kills every group and token-carrying process it was
    told of. The next watched group gets a new watchdog, with a new token. For a run of the command inside a
    longer-lived process (cli/main.py's run_in_process), which must leave behind what an ended process would."""
    global _instance
    with _instance_lock:
        if _instance is not None and _instance[0] == os.getpid():
            with _instance[1]._lock:
                _instance[1]._close()
        _instance = None


def _group_exists(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# ---- the helper process ----------------------------------------------------------------------------------


def _serve(token: str) -> None:
    """Collect group ids from stdin until end of file, then kill everything the agent started."""
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):
        signal.signal(signum, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())  # started from one of the agent's threads: SIGTERM ends it
    # Groups that are never the agent's commands, whatever arrives on the pipe: init's, the agent's, our own.
    spared = {0, 1, os.getpgrp(), _group_of(os.getppid())}
    groups: set[int] = set()
    cgroups: list[bytes] = []
    pending = b""
    while True:
        ready, _, _ = select.select([0], [], [], PRUNE_INTERVAL)
        if ready:
            data = os.read(0, 4096)
            if not data:
                break
            *lines, pending = (pending + data).split(b"\n")
            groups.update(int(line) for line in lines if line.strip().isdigit())
            groups -= spared
            cgroups += [line for line in lines if line.startswith(b"/") and b"/mini-agent-" in line]
        groups = {group for group in groups if _group_exists(group)}
    _kill_everything(groups, token)
    for cgroup in cgroups:
        _kill_cgroup(os.fsdecode(cgroup))


def _group_of(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except OSError:
        return 0


def _kill_everything(groups: set[int], token: str) -> None:
    for group in groups:
        try:
            os.killpg(group, signal.SIGKILL)
        except OSError:
            pass
    kill_carriers(TOKEN_VARIABLE, token)


def kill_carriers(variable: str, value: str) -> None:
    """SIGKILL every process whose environment holds `variable=value` (those forking meanwhile: next round)."""
    marker = f"{variable}={value}".encode()
    for _ in range(SCAN_ROUNDS):
        carriers = _carriers(marker)
        if not carriers:
            return
        for pid in carriers:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _kill_cgroup(path: str) -> None:
    """Kill everything in the cgroup and beneath it, then remove the (emptied) directories, deepest first."""
    try:
        with open(os.path.join(path, "cgroup.kill"), "w") as kill:
            kill.write("1")
    except OSError:
        return
    for _ in range(100):  # the killed need a moment to leave; a directory with members cannot be removed
        leftovers = [top for top, _, _ in os.walk(path, topdown=False)]
        for directory in leftovers:
            try:
                os.rmdir(directory)
            except OSError:
                pass
        if not os.path.isdir(path):
            return
        select.select([], [], [], 0.05)


def carriers(variable: str, value: str) -> list[int]:
    """Live processes whose environment holds `variable=value`."""
    return _carriers(f"{variable}={value}".encode())


def _carriers(marker: bytes) -> list[int]:
    """Live processes whose environment holds `marker` as a whole variable (none where /proc does not exist)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for name in names:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as stream:
                environment = stream.read()
        except OSError:  # gone, or another user's: not ours
            continue
        if marker in environment.split(b"\0"):
            found.append(int(name))
    return found


if __name__ == "__main__":
    _serve(sys.argv[1])
