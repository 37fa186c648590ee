"""The installed package's identity: version, every source file's mtime and size, and the site-packages
directory's mtime (which changes when pip adds or removes a distribution), so an upgrade of mini-agent or of a
dependency is never served by a server that imported the old code."""

from __future__ import annotations

import os
import sysconfig

from mini_agent import __version__

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def package_stamp() -> tuple:
    files = []
    for directory, subdirectories, names in os.walk(PACKAGE):
        subdirectories[:] = sorted(name for name in subdirectories if name != "__pycache__")
        for name in sorted(names):
            if name.endswith((".py", ".md", ".so", ".toml", ".json")):
                try:
                    info = os.stat(os.path.join(directory, name))
                except OSError:
                    continue
                files.append((os.path.relpath(os.path.join(directory, name), PACKAGE), info.st_mtime_ns, info.st_size))
    return (__version__, _mtime(sysconfig.get_paths()["purelib"]), tuple(files))


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
