"""Commands that reach the user's local services: a tmux or screen server, docker and its kin, ssh-agent and
gpg-agent, D-Bus and systemd, the desktop (X, clipboard, URL openers), editors' servers.

Each of these talks over a socket to a process that runs outside the sandbox with the user's full rights: the
tmux server runs `run-shell` scripts, docker starts a privileged container with `/` mounted, ssh-agent signs
whatever it is handed. The sandbox refuses such sockets (sandbox/seccomp.py), but the human should decide before
the attempt, so each verdict here is destructive, which asks in every mode but bypass, and its reason opens with
"local service" so the human sees the category. Commands that only print their version stay as they were.
"""

from __future__ import annotations

import os
import re
import stat

from mini_agent.safety.sandbox.services import service_variable
from mini_agent.safety.shell import argv
from mini_agent.safety.shell.verdict import Verdict, destructive
from mini_agent.safety.shell.words import Word

CATEGORY = "local service"
VERSION_ONLY = {"-V", "-v", "--version", "-h", "--help", "-?"}
ALWAYS: dict[str, str] = {
    **dict.fromkeys(("tmux", "tmate", "byobu"), "your tmux server, which runs commands outside the sandbox"),
    **dict.fromkeys(("screen", "zellij", "abduco", "dtach"), "your terminal sessions, outside the sandbox"),
    **dict.fromkeys(
        (
            "docker docker-compose podman podman-compose podman-remote nerdctl buildah buildctl ctr crictl lxc "
            "incus virsh colima limactl lima multipass orbctl"
        ).split(),
        "a container or VM engine, which can start privileged containers with your files",
    ),
    **dict.fromkeys(("kubectl", "oc", "helm", "k3s", "kind", "minikube"), "a cluster, with your credentials"),
    "ssh-add": "your ssh-agent, which signs with your keys",
    "gpg-connect-agent": "your gpg-agent, which holds your private keys",
    "secret-tool": "your keyring's stored passwords",
    "keyctl": "the kernel keyring's stored keys",
    "systemd-run": "systemd, which starts it as a unit outside the sandbox",
    "run0": "systemd, which runs it as another user",
    "machinectl": "systemd's machines and their shells",
    **dict.fromkeys(("dbus-send", "gdbus", "qdbus", "dbus-monitor"), "the D-Bus message bus and every service on it"),
    **dict.fromkeys(
        ("xdg-open", "kde-open", "kde-open5", "gnome-open", "exo-open", "open", "osascript"),
        "your desktop, which opens programs and URLs outside the sandbox",
    ),
    "launchctl": "launchd, which starts programs outside the sandbox",
    **dict.fromkeys(("xdotool", "ydotool", "wtype"), "your display, typing into your other windows"),
    **dict.fromkeys(("xclip", "xsel", "wl-copy", "wl-paste", "pbcopy", "pbpaste"), "your clipboard"),
    **dict.fromkeys(("emacsclient", "nvr"), "your editor's server, which runs code outside the sandbox"),
    **dict.fromkeys(("i3-msg", "swaymsg", "hyprctl"), "your window manager, which runs commands outside the sandbox"),
    **dict.fromkeys(("flatpak-spawn", "host-spawn", "distrobox-host-exec"), "the host, outside any sandbox"),
}
"""Commands whose every use (but `--version`) reaches the service named."""
READS: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    "systemctl": (
        "systemd, which starts, stops and configures services outside the sandbox",
        frozenset(
            "status show cat list-units list-unit-files list-sockets list-timers list-jobs list-dependencies "
            "list-machines list-automounts list-paths is-active is-enabled is-failed is-system-running help "
            "get-default".split()
        ),
        frozenset(
            "-t --type -p --property -H --host -M --machine -n --lines -o --output -s --signal --state "
            "--root --kill-whom --kill-value --job-mode --what --when --message --timestamp".split()
        ),
    ),
    "loginctl": (
        "systemd-logind, which ends sessions and keeps your services running after logout (linger)",
        frozenset(
            "list-sessions list-users list-seats session-status user-status seat-status show-session "
            "show-user show-seat help".split()
        ),
        frozenset("-p --property -H --host -M --machine -n --lines -o --output -s --signal --kill-whom".split()),
    ),
    "busctl": (
        "the D-Bus message bus and every service on it",
        frozenset("list status tree introspect help".split()),
        frozenset("-H --host -M --machine --match --size --expect-reply --timeout".split()),
    ),
    "gsettings": (
        "your desktop settings (a custom shortcut runs a command outside the sandbox)",
        frozenset(
            "get range list-schemas list-relocatable-schemas list-keys list-children list-recursively "
            "describe writable monitor help".split()
        ),
        frozenset("--schemadir".split()),
    ),
    "dconf": ("your desktop settings", frozenset("read list dump watch help blame".split()), frozenset()),
    "gio": (
        "your desktop, which opens programs and URLs outside the sandbox",
        frozenset("info list tree cat help version mime".split()),
        frozenset(),
    ),
}
"""Commands whose subcommand decides: the ones listed only look; any other reaches the service."""
UNIX_ADDRESS = re.compile(r"^(unix|http\+unix|unix-connect|unix-client|abstract-connect|abstract-client):", re.I)
SOCAT_UNIX = re.compile(r"^(unix|abstract|gopen)[-:]|^[^:,]*/", re.I)
NETCATS = {"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd"}
NETCAT_UNIX = re.compile(r"-[a-zA-Z]*U[a-zA-Z]*|--unixsock|--unix")
SSH_LIKE = {"ssh", "scp", "sftp", "autossh", "slogin"}
SSH_VALUES = frozenset("-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -P -p -Q -R -S -W -w".split())
SSH_AGENT_OPTIONS = {"forwardagent", "identityagent", "controlpath", "controlmaster"}
GPG_USES_KEYS = set(
    "-s --sign --clearsign --clear-sign -b --detach-sign -d --decrypt --export-secret-keys --export-secret-subkeys "
    "--card-edit --passwd --gen-revoke".split()
)
GPG_VALUES = frozenset("-u --local-user -r --recipient -o --output -R --hidden-recipient --homedir -f -z".split())
NAME_ONLY = {"ls", "stat", "test", "[", "[[", "file", "realpath", "readlink", "echo", "printf", "rm", "unlink"}
WORDS_LIMIT = 200


def verdicts(name: str, arguments: tuple[Word, ...]) -> list[Verdict]:
    """A destructive verdict when the command reaches one of the user's local services; else none."""
    values = [word.value for word in arguments]
    if values and all(value in VERSION_ONLY for value in values):
        return []
    what = ALWAYS.get(name) or _subcommand(name, arguments) or _option(name, arguments)
    if what is None and name not in NAME_ONLY:
        what = _socket_argument(arguments)
    if what is None:
        return []
    return [destructive(f"{CATEGORY}: {name} reaches {what}")]


def setting(name: str, value: str | None) -> Verdict | None:
    """`DOCKER_HOST=unix:///run/docker.sock cmd`, `SSH_AUTH_SOCK=... git push`: a setting that points the
    command at one of the user's services."""
    if value is not None and service_variable(name, value):
        return destructive(f"{CATEGORY}: {name}={value} points the command at one of your services")
    return None


def _subcommand(name: str, arguments: tuple[Word, ...]) -> str | None:
    if name == "nvim" and any((v or "").startswith(("--server", "--remote")) for v in _values(arguments)):
        return "your editor's server, which runs code outside the sandbox"
    if name in ("kitty", "kitten", "wezterm"):
        first = arguments[0].value if arguments else ""
        if first in ("@", "cli") or (first or "").startswith("@"):
            return "your terminal, which runs commands outside the sandbox"
        return None
    if name not in READS:
        return None
    what, reads, takes_value = READS[name]
    parsed = argv.parse(arguments, takes_value)
    verb = parsed.operands[0].value if parsed.operands else "list-units" if name == "systemctl" else "help"
    return None if verb in reads else what


def _option(name: str, arguments: tuple[Word, ...]) -> str | None:
    values = _values(arguments)
    flag = next(
        (f for v in values if (f := (v or "").split("=")[0]) in ("--unix-socket", "--abstract-unix-socket")), ""
    )
    if name == "curl" and flag:
        return f"a Unix socket ({flag}), such as docker's"
    if name == "socat" and any(value is None or SOCAT_UNIX.search(value) for value in values if value != "-"):
        return "a Unix socket (or a path socat opens as one)"
    if name in NETCATS and any(NETCAT_UNIX.fullmatch(value or "") for value in values):
        return "a Unix socket (-U)"
    if name == "ssh-keygen" and any(word.value == "sign" for word in argv.parse(arguments, {"-Y"}).value("-Y")):
        return "your ssh-agent or keys, to sign (-Y sign)"
    if name in SSH_LIKE:
        return _ssh(arguments)
    if name in ("gpg", "gpg2") and argv.parse(arguments, GPG_VALUES).has(*GPG_USES_KEYS):
        return "your gpg-agent, which signs or decrypts with your private keys"
    found = next((value for value in values if value and UNIX_ADDRESS.match(value)), None)
    return f"a Unix socket ({found})" if found else None


def _ssh(arguments: tuple[Word, ...]) -> str | None:
    parsed = argv.parse(arguments, SSH_VALUES, permute=False)
    if parsed.has("-A"):
        return "your ssh-agent, forwarded to another machine (-A)"
    if any((word.value or "none") != "none" for word in parsed.value("-S")):
        return "an existing ssh connection's control socket (-S)"
    for word in parsed.value("-o"):
        key, _, setting = (word.value or "").replace(" ", "=", 1).partition("=")
        if word.value is None or (key.lower() in SSH_AGENT_OPTIONS and setting.lower() not in ("no", "none", "")):
            return f"your ssh-agent or an existing ssh connection (-o {word.value or word.text})"
    return None


def _socket_argument(arguments: tuple[Word, ...]) -> str | None:
    """An argument naming an existing socket file (`python client.py /run/docker.sock`)."""
    for word in arguments[:WORDS_LIMIT]:
        value = word.value or ""
        path = value.partition("=")[2] if value.startswith("-") else value
        if path.startswith("~/"):
            path = os.path.expanduser(path)
        if path.startswith("/") and len(path) < 4096 and _is_socket(path):
            return f"the Unix socket {path}"
    return None


def _values(arguments: tuple[Word, ...]) -> list[str | None]:
    return [word.value for word in arguments[:WORDS_LIMIT]]


def _is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
