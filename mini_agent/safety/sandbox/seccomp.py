"""The seccomp program every confined command runs under on Linux: no new Unix-domain socket.

The user's services listen on Unix sockets (tmux, screen, docker, podman, ssh-agent, gpg-agent, D-Bus, systemd,
the X server); a script that connects to one acts outside the sandbox with the user's rights, and no classifier
sees a script's system calls. A BPF filter cannot read connect()'s path argument, so the socket is refused where
it is made: `socket(AF_UNIX, ...)` fails with EPERM, path and abstract sockets alike. `socketpair()` stays (it
reaches nothing: pipes between a program's own processes, as Python, node and make use), and so do the network
families where the network is granted. Refused too: VM sockets (AF_VSOCK, a guest's way to its host), io_uring
(its SOCKET and CONNECT operations bypass seccomp) and pidfd_getfd (an open socket taken from another process).
Other architectures' system calls (i386's socketcall through int 0x80) meet libseccomp's default: the process
is killed.

What that costs: a program that serves or uses a Unix socket of its own inside the sandbox (multiprocessing's
forkserver and Manager, a test that starts a server on a socket path) fails there, and the model asks to run it
outside. glibc's nscd and systemd-resolved lookups fall back to files as they do when those daemons are absent.

The program is compiled once per process by libseccomp (through pyseccomp, a ctypes binding: no BPF written here)
and exported as bytes. bubblewrap loads it from a memfd (`--seccomp FD`); under Landlock the child loads it with
prctl just before exec. Without libseccomp or pyseccomp there is no program, `unavailable_reason()` says why,
and `mini-agent sandbox` says so; commands still run under the rest of the sandbox.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import os
import socket
import sys

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
AF_VSOCK = 40
FAMILIES = (socket.AF_UNIX, AF_VSOCK)
"""Socket families refused: Unix-domain sockets, and VM sockets (a guest's way to its host's services, which no
network namespace cuts)."""
SYSCALLS = ("io_uring_setup", "pidfd_getfd")
"""Calls refused outright: io_uring (its operations bypass seccomp), and taking a descriptor (an open socket) out
of another process."""
TERMINAL_IOCTLS = (0x5412, 0x541C)
"""TIOCSTI (push characters into a terminal's input, as if the user typed them) and TIOCLINUX (the console's
selection, which can paste): a command that reaches the user's terminal would type commands into their shell."""
REFUSED = (
    "socket(AF_UNIX) (Unix-domain sockets, path and abstract)",
    "socket(AF_VSOCK)",
    "io_uring_setup",
    "pidfd_getfd",
    "ioctl(TIOCSTI, TIOCLINUX) (typing into a terminal)",
)
"""What the program refuses, for `mini-agent sandbox`."""
KNOWN_LIBRARIES = {"c": "libc.so.6", "seccomp": "libseccomp.so.2"}
"""Sonames tried before ctypes.util.find_library, which runs ldconfig (about 0.2 s) to find them."""


class _Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


@functools.cache
def _compiled() -> tuple[bytes | None, str | None]:
    if not sys.platform.startswith("linux"):
        return None, "seccomp needs Linux"
    if not _kernel_filters():
        return None, "this kernel has no seccomp (CONFIG_SECCOMP)"
    try:
        with _known_sonames():
            import pyseccomp
    except ImportError:
        return None, "the pyseccomp package is not installed"
    except (RuntimeError, OSError) as error:  # pyseccomp raises RuntimeError when libseccomp is missing
        return None, f"libseccomp could not be loaded ({error})"
    try:
        rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
        for family in FAMILIES:
            rules.add_rule(pyseccomp.ERRNO(errno.EPERM), "socket", pyseccomp.Arg(0, pyseccomp.EQ, family))
        for request in TERMINAL_IOCTLS:  # compared on the low 32 bits, as the kernel reads the request
            low_bits = pyseccomp.Arg(1, pyseccomp.MASKED_EQ, 0xFFFFFFFF, request)
            rules.add_rule(pyseccomp.ERRNO(errno.EPERM), "ioctl", low_bits)
        for name in SYSCALLS:
            try:
                rules.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
            except OSError:  # a libseccomp older than the call: the kernel may lack it too
                continue
        read, write = os.pipe()
        try:
            with os.fdopen(write, "wb", closefd=True) as sink:
                rules.export_bpf(sink)
            with os.fdopen(read, "rb", closefd=True) as source:
                return source.read(), None
        except BaseException:
            for fd in (read, write):
                with contextlib.suppress(OSError):
                    os.close(fd)
            raise
    except (OSError, ValueError, AttributeError) as error:
        return None, f"libseccomp could not compile the filter ({error})"


def _kernel_filters() -> bool:
    """Whether the kernel has seccomp: it shows every process's `Seccomp:` mode when it does."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            return any(line.startswith("Seccomp:") for line in status)
    except OSError:
        return True  # no /proc to ask: let loading tell


@contextlib.contextmanager
def _known_sonames():
    import ctypes.util

    original = ctypes.util.find_library

    def find(name: str):
        known = KNOWN_LIBRARIES.get(name)
        if known is not None:
            try:
                ctypes.CDLL(known)
                return known
            except OSError:
                pass
        return original(name)

    ctypes.util.find_library = find
    try:
        yield
    finally:
        ctypes.util.find_library = original


def program() -> bytes | None:
    """The compiled BPF program (struct sock_filter entries), or None where there is none."""
    return _compiled()[0]


def unavailable_reason() -> str | None:
    """Why `program()` is None, or None when there is a program."""
    return _compiled()[1]


def memfd(code: bytes) -> int:
    """A sealed in-memory file holding the program, read from the start: what `bwrap --seccomp FD` reads. Not a
    file on disk, where a confined command (which may write /tmp) could swap it before the next one starts."""
    fd = os.memfd_create("mini-agent-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.write(fd, code)
        os.lseek(fd, 0, os.SEEK_SET)
        import fcntl

        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK)
    except BaseException:
        os.close(fd)
        raise
    return fd


class Loader:
    """The program laid out for prctl, built in the parent so the forked child only makes one system call."""

    def __init__(self, code: bytes) -> None:
        self._buffer = ctypes.create_string_buffer(code, len(code))
        self._fprog = _Fprog(len(code) // 8, ctypes.cast(self._buffer, ctypes.c_void_p))
        self._libc = ctypes.CDLL(None, use_errno=True)

    def load(self) -> None:
        """In the child, after PR_SET_NO_NEW_PRIVS: from here on the filter holds for it and all it starts."""
        if self._libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(self._fprog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")
