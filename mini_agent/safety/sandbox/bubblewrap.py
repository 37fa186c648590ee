"""bubblewrap (bwrap): the plan as a mount namespace over a read-only view of `/`, plus fresh PID, IPC, UTS,
cgroup and (unless granted) network namespaces.

Mount order carries the meaning: the read-only root first, then the writable binds (the git dir bound again onto
itself, so that it cannot be renamed away: a mount point cannot be moved), then the read-only islands
inside them, then the hidden paths covered last so nothing re-exposes them. Hidden paths are covered by an
empty placeholder with mode 000 (capabilities dropped, so even root gets "Permission denied").
"""

from __future__ import annotations

import os
from pathlib import Path

from mini_agent.safety.sandbox.confinement import Plan


def command(
    executable: str,
    plan: Plan,
    cwd: Path,
    argv: list[str],
    hide_with: tuple[Path, Path],
    services: tuple[Path, ...] = (),
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bwrap command line that runs `argv` in `cwd` under the plan; `services` (the user's service sockets
    and their directories, see services.py) are covered like hidden paths; `seccomp_fd` holds the program
    bwrap loads just before it runs `argv`."""
    args = [executable, "--die-with-parent", "--new-session", "--unshare-all"]
    if plan.network:
        args.append("--share-net")
    args += ["--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in (*plan.writable, *plan.pinned):  # pinned after their root: a mount point cannot be renamed
        if path == plan.tmpdir and _inside_another(path, plan.writable):
            continue  # the private TMPDIR in a writable /tmp: writable already, and each mount costs ~0.2 ms
        args += ["--bind", str(path), str(path)]
    for path in plan.read_only:
        args += ["--ro-bind", str(path), str(path)]
    empty_file, empty_dir = hide_with
    for path in (*plan.hidden, *services):
        cover = empty_dir if os.path.isdir(path) and not os.path.islink(path) else empty_file
        args += ["--ro-bind", str(cover), str(path)]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", str(cwd), "--", *argv]
    return args


def _inside_another(path: Path, roots: tuple[Path, ...]) -> bool:
    text = str(path)
    return any(root != path and text.startswith(str(root).rstrip("/") + "/") for root in roots)
