"""Where the warm server listens: a socket in a directory only this user can open, one per installation.

`$XDG_RUNTIME_DIR/mini-agent/` (per login, cleared at logout), else `<tmp>/mini-agent-<uid>/`. The directory
is made 0700 and checked on every use: if someone else owns it, or others may enter it, there is no warm start
(a socket there could be another user's, who would receive our environment and terminal).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: this runs in every warm invocation
if TYPE_CHECKING:
    from collections.abc import Mapping

PRIVATE = 0o700


def installation_key() -> str:
    """One server per installed copy and environment: two virtualenvs never serve each other's invocations
    (`python` and `python3` of one environment are the same installation: sys.prefix, not sys.executable)."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return f"{package}\0{sys.prefix}\0{sys.version}"


def _fnv1a(text: str) -> str:
    # A hash without importing hashlib or zlib: the client's whole budget is a few milliseconds.
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogateescape"):
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{value:016x}"


def runtime_dir(env: Mapping[str, str] | None = None) -> str | None:
    """The private directory for the socket, made if missing; None when it cannot be made private."""
    env = os.environ if env is None else env
    uid = os.getuid()
    base = env.get("XDG_RUNTIME_DIR", "")
    if base and os.path.isabs(base):
        path = os.path.join(base, "mini-agent")
    else:
        base = env.get("TMPDIR") or "/tmp"
        path = os.path.join(base, f"mini-agent-{uid}")
    try:
        os.mkdir(path, PRIVATE)
    except FileExistsError:
        pass
    except OSError:
        return None
    return path if private(path, uid) else None


def private(path: str, uid: int) -> bool:
    """A real directory (not a link) owned by `uid` that nobody else may enter."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    is_dir = (info.st_mode & 0o170000) == 0o040000
    return is_dir and info.st_uid == uid and not info.st_mode & 0o077


def socket_path(directory: str) -> str:
    return os.path.join(directory, f"{_fnv1a(installation_key())}.sock")


def lock_path(directory: str) -> str:
    return os.path.join(directory, f"{_fnv1a(installation_key())}.lock")
