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


def watched() -> tuple[tuple[Path, int], ...]:
    """What to look at for a change, with how many directory levels deep: each site-packages' entries (a new
    `.pth`), a prefix's entries (`pyvenv.cfg`) and its `bin/` (the scripts that start mini-agent)."""
    places: list[tuple[Path, int]] = []
    for place in installation():
        places.append((place, 1))
        if (place / "bin").is_dir():
            places.append((place / "bin", 1))
    return tuple(places)
