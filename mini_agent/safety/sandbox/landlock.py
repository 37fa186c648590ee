"""Landlock, the Linux LSM any process can apply to itself: the ruleset for a plan, built in the parent, and
the few system calls that enforce it in the child between fork and exec.

Landlock only grants (a rule allows an access on a whole file hierarchy; there is no deny). Hidden paths are
therefore carved out by granting each sibling along the way instead of the ancestor (`carve`). What it cannot
do: keep a path read-only inside a writable directory (the directory's rights reach everything beneath it),
filter UDP, or stop connect() on Unix sockets found through the file system; `describe()` says so.
The `landlock` package on PyPI (1.0.0.dev5) covers file rules only (no network, no scoping), hence ctypes.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import stat
from pathlib import Path

from mini_agent.safety.sandbox.confinement import Plan, below

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same numbers on every architecture
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP = 38, 1, 4, 24
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
"""The rights that apply to a file itself; the others are about a directory's entries. A directory on the way to a
hidden path loses them: nothing beneath it may be read, run or written through its rule."""
READ = EXECUTE | READ_FILE | READ_DIR | IOCTL_DEV
WRITE = WRITE_FILE | TRUNCATE | REMOVE_DIR | REMOVE_FILE | REFER
WRITE |= MAKE_DIR | MAKE_REG | MAKE_SOCK | MAKE_FIFO | MAKE_SYM  # never MAKE_CHAR / MAKE_BLOCK: no device nodes
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full")
"""Harmless to write at any level: discarding output, reading zeros. Not the terminals (/dev/tty, /dev/pts): a
command's output goes through the agent, which shows control characters by name; one that opened the user's own
terminal (`/dev/pts/N`) could write escape sequences past it, or type into the user's shell. bubblewrap gives a
command a devpts of its own instead."""
SHARED_MEMORY = "/dev/shm"
DEATH_SIGNAL = signal.SIGPWR
"""Sent to the watcher shell when the agent dies; nothing else sends it."""
WATCHER = 'trap "kill -KILL 0" PWR; "$@" & wait "$!"'
"""The watcher shell: runs the command in the background, so that when the agent dies (PR_SET_PDEATHSIG) it can
kill the whole process group, background children included. Without a PID namespace nothing else would."""


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


@functools.cache
def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


@functools.cache
def abi_version() -> int:
    """Landlock's ABI version in this kernel; 0 when Landlock is absent or disabled."""
    try:
        libc = _libc()
    except OSError:
        return 0
    version = libc.syscall(
        ctypes.c_long(CREATE_RULESET), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION)
    )
    return max(int(version), 0)


def handled_fs(abi: int) -> int:
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def grants(plan: Plan) -> list[tuple[Path, int]]:
    """What the plan allows, as (path, rights) before hidden paths are carved out."""
    rules: list[tuple[Path, int]] = [(Path("/"), READ)]
    rules += [(Path(device), READ | WRITE_FILE | TRUNCATE) for device in DEVICE_FILES if os.path.exists(device)]
    if plan.level == "workspace-write" and os.path.isdir(SHARED_MEMORY):
        rules.append((Path(SHARED_MEMORY), READ | WRITE))
    rules += [(path, READ | WRITE) for path in plan.writable]
    return rules


def carve(rules: list[tuple[Path, int]], hidden: tuple[Path, ...]) -> list[tuple[Path, int]]:
    """The same grants with every hidden path left out: a grant above a hidden path is replaced by the same grant
    on each sibling along the way, while the directories on the way keep only their directory rights. (On the
    text of resolved paths: `Path.parents` is slow, and this runs per command.)"""
    hidden_text = [str(hide) for hide in hidden]
    carved: list[tuple[Path, int]] = []
    for path, rights in rules:
        text = str(path)
        if any(text == hide or below(text, hide) for hide in hidden_text):
            continue
        beneath = [hide for hide in hidden_text if below(hide, text)]
        carved += (
            [(Path(where), grant) for where, grant in _split(text, rights, beneath)] if beneath else [(path, rights)]
        )
    return carved


def _split(directory: str, rights: int, hidden: list[str]) -> list[tuple[str, int]]:
    rules = [(directory, rights & ~FILE_RIGHTS)]
    try:
        with os.scandir(directory) as listed:
            entries = list(listed)
    except OSError:
        return rules
    for entry in entries:
        child = os.path.join(directory, entry.name)
        if child in hidden or entry.is_symlink():  # a symlink grants nothing: its target's own rules apply
            continue
        beneath = [hide for hide in hidden if below(hide, child)]
        if beneath:
            rules += _split(child, rights, beneath)
        else:
            rules.append((child, rights))
    return rules


class Ruleset:
    """A Landlock ruleset file descriptor built in the parent; `restrict` enforces it in the forked child."""

    def __init__(self, plan: Plan, abi: int) -> None:
        libc = _libc()
        fs = handled_fs(abi)
        attr = _RulesetAttr(fs, 0, 0)
        if abi >= 4 and not plan.network:
            attr.net = NET_BIND_TCP | NET_CONNECT_TCP  # handled with no rule: every TCP bind and connect denied
        if abi >= 6:
            attr.scoped = SCOPE_SIGNAL | (0 if plan.network else SCOPE_ABSTRACT_UNIX_SOCKET)
        size = 8 if abi < 4 else 16 if abi < 6 else 24
        fd = libc.syscall(ctypes.c_long(CREATE_RULESET), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise OSError(ctypes.get_errno(), f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
        self.fd = int(fd)
        try:
            for path, rights in carve(grants(plan), plan.hidden):
                self._allow(path, rights & fs)
        except BaseException:
            self.close()
            raise
        self._parent = os.getpid()
        self._last_capability = _last_capability()
        hide_agent()

    def _allow(self, path: Path, rights: int) -> None:
        try:
            target = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # vanished since it was listed: nothing to grant
        try:
            if not stat.S_ISDIR(os.fstat(target).st_mode):
                rights &= FILE_RIGHTS
            if not rights:
                return
            rule = _PathBeneath(rights, target)
            done = _libc().syscall(
                ctypes.c_long(ADD_RULE), ctypes.c_int(self.fd), ctypes.c_int(RULE_PATH_BENEATH), ctypes.byref(rule),
                ctypes.c_uint32(0),
            )  # fmt: skip
            if done < 0:
                errno = ctypes.get_errno()
                raise OSError(errno, f"landlock_add_rule {path}: {os.strerror(errno)}")
        finally:
            os.close(target)

    def restrict(self) -> None:
        """In the child, after fork and before exec: die with the agent, no new privileges, then the ruleset."""
        libc = _libc()
        libc.prctl(PR_SET_PDEATHSIG, int(DEATH_SIGNAL), 0, 0, 0)
        if os.getppid() != self._parent:  # the agent died before the line above: do not run at all
            os._exit(1)
        # Root keeps its capabilities through exec unless they leave the bounding set; with them the agent's
        # /proc/<agent>/environ stays readable despite hide_agent(). (For other users these calls fail: no-ops.)
        for capability in range(self._last_capability + 1):
            libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
        libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(ctypes.c_long(RESTRICT_SELF), ctypes.c_int(self.fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


@functools.cache
def _last_capability() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 63


@functools.cache
def hide_agent() -> None:
    """Make this (the agent's) process non-dumpable, once: Landlock stops ptrace but, on recent kernels, not
    reads of /proc/<pid>/environ; a non-dumpable process's /proc files are readable only with CAP_SYS_PTRACE,
    which confined commands lack. Side effects: no core dumps, and debuggers need root to attach."""
    _libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def wrap(argv: list[str]) -> list[str]:
    """The command under the watcher shell (see WATCHER)."""
    return ["/bin/sh", "-c", WATCHER, "mini-agent-sandbox", *argv]
