"""Seatbelt (macOS `sandbox-exec`): the plan as a generated SBPL profile.

Later rules win in SBPL, so the profile allows reads everywhere, then denies the hidden paths; denies every write,
then allows the writable roots and devices, then denies the read-only islands again. Paths are passed as
parameters (`-D NAME=path`), never spliced into the profile text, so no path can change the profile's meaning.
"""

from __future__ import annotations

from pathlib import Path

from mini_agent.safety.sandbox.confinement import Plan

WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper")
HEADER = """(version 1)
(deny default)
(import "system.sb")
(allow process-exec process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read mach-lookup ipc-posix-shm iokit-open pseudo-tty file-ioctl)
(allow file-read*)"""


def profile(plan: Plan) -> tuple[str, dict[str, str]]:
    """The SBPL text and its parameters for `sandbox-exec -p TEXT -D NAME=VALUE ... -- argv`."""
    params: dict[str, str] = {}
    lines = [HEADER]

    def param(prefix: str, index: int, path: Path) -> str:
        name = f"{prefix}_{index}"
        params[name] = str(path)
        return f'(subpath (param "{name}"))'

    if plan.hidden:
        lines.append("(deny file-read* " + " ".join(param("HIDDEN", i, p) for i, p in enumerate(plan.hidden)) + ")")
    lines.append("(deny file-write*)")
    writable = [param("WRITABLE", i, p) for i, p in enumerate(plan.writable)]
    writable += [f'(literal "{device}")' for device in WRITABLE_DEVICES]
    lines.append("(allow file-write* " + " ".join(writable) + ")")
    if plan.read_only:
        lines.append(
            "(deny file-write* " + " ".join(param("READONLY", i, p) for i, p in enumerate(plan.read_only)) + ")"
        )
    if plan.hidden:
        hidden = " ".join(f'(subpath (param "HIDDEN_{index}"))' for index in range(len(plan.hidden)))
        lines.append(f"(deny file-write* {hidden})")
    if plan.network:  # without it, network stays under (deny default): no sockets out, no DNS
        lines.append("(allow network* system-socket)")
    return "\n".join(lines) + "\n", params


def command(executable: str, plan: Plan, argv: list[str]) -> list[str]:
    text, params = profile(plan)
    args = [executable, "-p", text]
    for name, value in params.items():
        args += ["-D", f"{name}={value}"]
    return [*args, "--", *argv]
