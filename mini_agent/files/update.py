"""Changing a file that other processes read and change too: the config files `mini-agent mcp add|remove` edit,
a project's `.mcp.json`, trust.json.

Each change holds an exclusive lock for its whole read-change-write, so ten writers at once each keep what the
others wrote; the new text replaces the old whole (a temporary file in the same directory, renamed over it), so a
reader, or a writer killed half-way, never leaves or sees half a file. The lock is a hidden file beside the target,
never the target itself: the rename gives the target a new inode, which would let a second writer lock the old one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from mini_agent.errors import ConfigError


def update_text(path: Path, change: Callable[[str], str]) -> None:
    """Read the file (empty if it does not exist), apply `change` and write the result, all under the lock. A
    `change` that raises leaves the file as it was. A symlinked file (a dotfiles repository) is written through."""
    path = path.resolve() if path.is_symlink() else path
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        before = read_text(path)
        after = change(before)
        if after != before:
            replace_text(path, after)


def read_text(path: Path) -> str:
    """A config file's text; "" when it does not exist; a ConfigError naming the file when it is not UTF-8."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise ConfigError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not UTF-8 text (byte {exc.start}); save it as UTF-8 and try again.") from None


def replace_text(path: Path, text: str) -> None:
    """Write `text` to a temporary file beside `path` and rename it over `path`, keeping the old file's mode."""
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    descriptor = os.open(path.parent / f".{path.name}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock
