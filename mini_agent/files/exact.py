"""Opening exactly the file the permission policy checked, whatever happened to the path since.

The policy judges a path with its symlinks resolved; a command running in the background can then swap a
component for a symlink to `~/.ssh` before the tool opens it, and win that race often enough in a loop. So the
file tools resolve a path once (the policy's resolution, see `ToolContext.checked`) and open that symlink-free
path without following any symlink on the way: `openat2(RESOLVE_NO_SYMLINKS)` where the kernel has it (Linux
5.6+; called through ctypes, Python has no wrapper), else one `O_NOFOLLOW` step per component from `/` with
directory descriptors. A swapped component then fails the open (ELOOP / ENOTDIR) and the tool reports a path that
changed under it. Writes happen inside a directory descriptor opened the same way, so the temporary file and
the rename land in the checked directory. Symlinks inside the project keep working: they were followed once,
when the path was resolved, and their target is what gets checked and opened.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import stat
from pathlib import Path

SYS_OPENAT2 = 437  # the same number on every architecture
RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH = 0x02, 0x04, 0x08
AT_FDCWD = -100
CHANGED = (errno.ELOOP, errno.ENOTDIR, errno.EXDEV)
"""What an open without symlinks fails with when a component has become a symlink."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


@functools.cache
def _syscall():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    function = libc.syscall
    function.restype = ctypes.c_long
    return function


def openat2(directory: int, path: str | Path, flags: int, mode: int = 0, resolve: int = 0) -> int:
    """The openat2 system call; OSError as os.open raises it (ENOSYS where the kernel lacks it)."""
    syscall = _syscall()
    if syscall is None:
        raise OSError(errno.ENOSYS, "openat2 is not available")
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & (os.O_CREAT | getattr(os, "O_TMPFILE", 0)) else 0, resolve)
    fd = syscall(
        ctypes.c_long(SYS_OPENAT2), ctypes.c_int(directory), os.fsencode(path), ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )  # fmt: skip
    if fd < 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number), str(path))
    return int(fd)


@functools.cache
def has_openat2() -> bool:
    """Whether this kernel has openat2 (and no seccomp filter refuses it)."""
    if not os.path.isdir("/proc/self"):
        return False
    try:
        os.close(openat2(AT_FDCWD, "/", os.O_RDONLY | os.O_DIRECTORY, resolve=RESOLVE_NO_SYMLINKS))
    except OSError:
        return False
    return True


def open_exact(path: Path, flags: int, mode: int = 0o666) -> int:
    """Open the absolute, resolved `path` following no symlink anywhere on it; OSError (errno in CHANGED) if a
    component is a symlink now. The descriptor is checked to be that very path (/proc/self/fd)."""
    if has_openat2():
        fd = openat2(AT_FDCWD, path, flags, mode, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
    else:
        directory = open_directory(path.parent)
        try:
            fd = os.open(path.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=directory)
        finally:
            os.close(directory)
    try:
        _same_path(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_directory(path: Path, create: bool = False) -> int:
    """A descriptor of the absolute, resolved directory `path`, reached without following any symlink; with
    `create`, missing directories are made on the way (each inside the one before, never through a link)."""
    if has_openat2() and not create:
        return openat2(
            AT_FDCWD, path, os.O_RDONLY | os.O_DIRECTORY, resolve=RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
        )
    current = os.open("/", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in path.parts[1:]:
            try:
                step = _step(current, part)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o777, dir_fd=current)
                except FileExistsError:
                    pass  # made meanwhile by someone else: opened below, without following it
                step = _step(current, part)
            os.close(current)
            current = step
    except BaseException:
        os.close(current)
        raise
    return current


def _step(directory: int, name: str) -> int:
    return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=directory)


def _same_path(fd: int, path: Path) -> None:
    """The descriptor names `path` (Linux); a bind mount or a rename meanwhile would show as a difference."""
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return  # no /proc: the no-symlink open is the whole guarantee
    if opened != str(path):
        raise OSError(errno.EXDEV, f"opened {opened}, not the checked {path}", str(path))


def regular(fd: int) -> os.stat_result:
    """fstat of an open descriptor that must be a regular file (EISDIR / EINVAL otherwise)."""
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    return info


def read_exact(path: Path) -> bytes:
    """The whole content of the regular file at the resolved `path`, opened without following symlinks."""
    fd = open_exact(path, os.O_RDONLY | os.O_NONBLOCK)  # a fifo swapped in must not hang us before fstat
    with os.fdopen(fd, "rb") as stream:
        regular(fd)
        return stream.read()
