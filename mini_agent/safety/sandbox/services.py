"""The user's local services, as a confined command could find them: the environment variables that point at
their sockets (removed from every confined command's environment) and the places those sockets live (covered
under bubblewrap).

A tmux server, docker, ssh-agent, gpg-agent, D-Bus, systemd, the X server or an editor's server acts with the
user's full rights outside any sandbox: reaching one is a way out. The seccomp program (seccomp.py) refuses new
Unix sockets wherever it loads; this module is the layer beneath it: nothing tells a command where the services
are, and under bubblewrap their sockets are not even there. Landlock cannot cover a path (connect() on a socket
needs no Landlock right), so there the seccomp program is what holds.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mini_agent.safety.sandbox import listings
from mini_agent.safety.sandbox.confinement import below

if TYPE_CHECKING:
    from mini_agent.safety.sandbox.confinement import Plan

SERVICE_VARIABLES = frozenset(
    (
        # terminal multiplexers and terminals that take commands over a socket
        "TMUX TMUX_PANE TMUX_TMPDIR STY SCREENDIR WINDOW ZELLIJ ZELLIJ_SESSION_NAME KITTY_LISTEN_ON KITTY_PID "
        "KITTY_WINDOW_ID WEZTERM_UNIX_SOCKET WEZTERM_PANE ALACRITTY_SOCKET "
        # agents holding keys
        "SSH_AUTH_SOCK SSH_AGENT_PID GPG_AGENT_INFO GNOME_KEYRING_CONTROL GNOME_KEYRING_PID "
        # buses, init, the desktop
        "DBUS_SESSION_BUS_ADDRESS DBUS_SYSTEM_BUS_ADDRESS DBUS_STARTER_ADDRESS NOTIFY_SOCKET XDG_RUNTIME_DIR "
        "DISPLAY XAUTHORITY WAYLAND_DISPLAY WAYLAND_SOCKET I3SOCK SWAYSOCK HYPRLAND_INSTANCE_SIGNATURE NIRI_SOCKET "
        "PULSE_SERVER PIPEWIRE_REMOTE "
        # container engines and clusters
        "DOCKER_HOST CONTAINER_HOST CONTAINERD_ADDRESS BUILDKIT_HOST KUBECONFIG "
        # editors' servers
        "NVIM NVIM_LISTEN_ADDRESS EMACS_SOCKET_NAME VSCODE_IPC_HOOK VSCODE_IPC_HOOK_CLI VSCODE_GIT_IPC_HANDLE"
    ).split()
)
"""Variables that name a service's socket, or tell a client to use one. Besides these, any variable whose value
is a `unix:` address or the path of an existing socket is removed (`service_variable`)."""
UNIX_ADDRESS = ("unix:", "unix://", "http+unix:", "npipe:")

RUNTIME_DIRS = ("/run/user/{uid}",)
SERVICE_DIRS = (
    "/run/screen", "/var/run/screen", "/run/dbus", "/var/run/dbus", "/run/docker", "/run/podman",
    "/run/containerd", "/run/crio", "/run/buildkit", "/run/libvirt", "/run/lxd", "/run/incus", "/run/k3s",
    "/run/postgresql", "/run/mysqld", "/run/redis", "/var/snap/lxd/common/lxd",
)  # fmt: skip
"""Directories that hold a service's sockets (system-wide ones, reachable by a user in its group, or by root)."""
HOME_DIRS = (".screen", ".docker/run", ".docker/desktop", ".colima", ".lima", ".rd")
TEMP_PATTERNS = (
    "tmux-{uid}", "tmate-{uid}", "zellij-{uid}", "ssh-*", ".X11-unix", ".ICE-unix", ".font-unix", "screens",
    "uscreens", "emacs{uid}", "nvim*", "kitty-*", "dbus-*", "vscode-ipc-*", "vscode-git-*", ".s.PGSQL.*",
    "mysql.sock", "mysqlx.sock",
)  # fmt: skip
"""Names in /tmp (and $TMUX_TMPDIR) under which services put their sockets."""
SOCKET_SCANS = ("/run", "/run/systemd", "/var/run")
"""Directories whose socket files are covered one by one (docker.sock, systemd's private socket)."""
SCAN_LIMIT = 2_000


def service_variable(name: str, value: str) -> bool:
    """Whether this variable leads a command to a user's service."""
    if name in SERVICE_VARIABLES:
        return True
    if value.startswith(UNIX_ADDRESS):
        return True
    return value.startswith("/") and len(value) < 4096 and _is_socket(value)


def environment(env: Mapping[str, str]) -> dict[str, str]:
    """The environment without the variables that point at the user's services."""
    return {name: value for name, value in env.items() if not service_variable(name, value)}


def locations(env: Mapping[str, str], home: Path) -> tuple[Path, ...]:
    """Existing places where the user's services keep their sockets (resolved): directories to cover whole and
    socket files to cover one by one. `env` is the environment the command was going to get. What exists is
    remembered while the directories that say so are unchanged (`listings`)."""
    uid = os.getuid()
    named = [env[name] for name in ("XDG_RUNTIME_DIR", "SCREENDIR") if env.get(name, "").startswith("/")]
    named += [path for value in env.values() if (path := _socket_path(value)) is not None]
    # Asked apart: the environment's sockets may sit in /tmp, whose changes would renew the fixed places too.
    found = [*listings.existing(_fixed(uid, str(home))), *listings.existing(tuple(named))]
    temp_dirs = {"/tmp", tempfile.gettempdir(), env.get("TMUX_TMPDIR", "") or "/tmp"}
    for directory in sorted(temp_dirs):
        found += _matching(directory, _temp_names(uid))
    for directory in SOCKET_SCANS:
        found += _sockets(directory)
    return tuple(dict.fromkeys(map(Path, found)))


@functools.lru_cache(maxsize=8)
def _fixed(uid: int, home: str) -> tuple[str, ...]:
    """The places that do not depend on the environment: runtime and service dirs, those under home."""
    return (
        *(pattern.format(uid=uid) for pattern in (*RUNTIME_DIRS, *SERVICE_DIRS)),
        *(os.path.join(home, name) for name in HOME_DIRS),
    )


@functools.cache
def _temp_names(uid: int) -> Callable[[str], object]:
    patterns = (pattern.format(uid=uid) for pattern in TEMP_PATTERNS)
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns)).match


def covered(env: Mapping[str, str], home: Path, plan: Plan) -> tuple[Path, ...]:
    """The service sockets and directories bubblewrap covers for a command run under `plan`: none that holds a
    path the command may use (the project, a writable root), none inside a hidden path (a mount cannot be made
    inside its cover), and only the outermost of nested ones."""
    used = tuple(map(str, (plan.root, *plan.writable)))
    hidden = (str(plan.root), *map(str, plan.hidden))
    places = [str(path) for path in locations(env, Path(os.path.realpath(home)))]
    kept = [
        path
        for path in places
        if path != "/"
        and not any(place == path or below(place, path) for place in used)
        and not any(path == place or below(path, place) for place in hidden)
    ]
    return tuple(Path(path) for path in kept if not any(below(path, other) for other in kept))


def _matching(directory: str, matches: Callable[[str], object], sockets: bool = False) -> list[str]:
    """The resolved paths of the entries of `directory` whose names match (a link to elsewhere is resolved)."""
    found = listings.names(directory, matches, SCAN_LIMIT, sockets)
    return [os.path.realpath(os.path.join(directory, name)) for name in found]


def _sockets(directory: str) -> list[str]:
    return _matching(directory, _any_name, sockets=True)


def _any_name(name: str) -> bool:
    return True


def _socket_path(value: str) -> str | None:
    """The socket file a variable's value names: a path, `unix:path=...` (D-Bus), `unix://...` (docker), the
    first field of $TMUX (`socket,pid,session`)."""
    for prefix in ("unix://", "unix:path=", "unix:"):
        if value.startswith(prefix):
            value = value[len(prefix) :].split(",")[0].split(";")[0]
            break
    else:
        value = value.split(",")[0]
    return value if value.startswith("/") and len(value) < 4096 and _is_socket(value) else None


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
