"""Where the running mini-agent is installed: its interpreter's prefix (a virtualenv's `bin/`, `lib/`,
`pyvenv.cfg`), its site-packages and, when Python reads it, the user's site-packages. Python runs what is there
(`*.pth` lines, `sitecustomize.py`, the packages themselves) at mini-agent's next start, before any policy of
its own, with the API key in the environment. So writes there are never routine (workspace.py), the sandbox
keeps these paths read-only inside a writable project (sandbox/confinement.py), and a change is watched
(planted.py). An editable install's source checkout is not counted: working on mini-agent with mini-agent must
stay possible, and that code is the project's own."""

from __future__ import annotations

import functools
import os
import site
import sys
from pathlib import Path


@functools.cache
def installation() -> tuple[Path, ...]:
    """The resolved directories of the running installation, outermost first, each once."""
    places = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    try:
        places += site.getsitepackages()
    except AttributeError:  # an embedded or old-style site module
        pass
    if site.ENABLE_USER_SITE and site.USER_SITE:
        places.append(site.USER_SITE)
    found: list[Path] = []
    for place in places:
        path = Path(os.path.realpath(place))
        if path == Path(path.anchor) or path == Path(os.path.realpath(Path.home())):
            continue  # a prefix of `/` (or home) would make everything "the installation"
        if path not in found:
            found.append(path)
    return tuple(found)


def inside_installation(path: Path) -> Path | None:
    """The installation directory holding a resolved path, or None."""
    return next((place for place in installation() if path == place or place in path.parents), None)


STARTUP_FILES = ("sitecustomize.py", "usercustomize.py", "pyvenv.cfg")
"""Besides `*.pth`, what Python reads from a site directory or a prefix at every start."""


def watched() -> tuple[Path, ...]:
    """The directories whose start-up files are looked at for a change: the prefix and its `bin/` (the scripts
    that start mini-agent), each site-packages. Not a virtualenv's base interpreter: rarely inside a project, and
    its many entries would make every look slower."""
    base = {Path(os.path.realpath(p)) for p in (sys.base_prefix, sys.base_exec_prefix)} - {
        Path(os.path.realpath(sys.prefix))
    }
    places: list[Path] = []
    for place in installation():
        if place in base:
            continue
        places.append(place)
        if (place / "bin").is_dir():
            places.append(place / "bin")
    return tuple(places)


def startup_state(directory: Path) -> tuple | None:
    """What in one directory runs at the next start, as identities: in a site-packages the `.pth` files and
    `*customize.py`, in a prefix `pyvenv.cfg`, in `bin/` every script; and the directory's own (an entry added,
    renamed or gone). A few `lstat`s: this runs around every call that may change files."""
    every = directory.name == "bin"
    try:
        own = os.lstat(directory)
        with os.scandir(directory) as entries:
            files = [
                (entry.name, stat.st_ino, stat.st_size, stat.st_mtime_ns)
                for entry in entries
                if every or entry.name.endswith(".pth") or entry.name in STARTUP_FILES
                for stat in (entry.stat(follow_symlinks=False),)
            ]
    except OSError:
        return None
    return (own.st_ino, own.st_mtime_ns, tuple(sorted(files)))
