"""What the sandbox enforces on this machine, for `mini-agent sandbox` and for the human deciding to trust it:
the mechanism, what each level allows, and the limits stated plainly."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from mini_agent.safety import gitrepo
from mini_agent.safety.sandbox import seccomp, services
from mini_agent.safety.sandbox.confinement import HIDDEN_IN_HOME, LEVELS, READ_ONLY_IN_ROOT, Confinement, plan
from mini_agent.safety.sandbox.gitkeep import KEEP
from mini_agent.safety.sandbox.probe import ENV_VARIABLE, choice, described, mechanism, unavailable_reason

COMMON_LIMITS = (
    "Reading is allowed everywhere except the hidden paths: other files of your user (outside the credential "
    "locations listed) stay readable.",
    "Variables that point at your services (TMUX, SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, DOCKER_HOST, "
    "DISPLAY, XDG_RUNTIME_DIR, ... and any whose value is a socket) are removed from every confined command.",
    "A path that does not exist when the command starts (e.g. .git/commondir) cannot be kept read-only: in the "
    "git dir it is put back after the command (and you are told); the agent's config is only reported.",
    "Only the project root's own repository is guarded: a nested repository or one the command creates (git "
    "init) is the command's work, like any script it writes.",
    "A command running in the sandbox still runs its own git with what it planted, inside the sandbox.",
)
LIMITS = {
    "bubblewrap": (
        "Your services' sockets present when a command starts (the runtime dir, tmux, screen, ssh-agent, docker, "
        "D-Bus, X, systemd's) are covered; a socket made later in a shared place such as /tmp is not.",
        "Network is all or nothing (a private network namespace); no per-host rules.",
        "Children die with the agent (--die-with-parent, PID namespace); background processes (`cmd &`) also "
        "end when the command returns, since its PID namespace ends with it.",
    ),
    "landlock": (
        "Your services' sockets stay visible: Landlock has no right for connect() on a socket; the seccomp "
        "filter is what keeps commands from them.",
        "Inside the writable project root, the git dir's control files and the agent's config are NOT kept "
        "read-only, nor the git dir pinned: Landlock can only grant, and the root's rights reach everything beneath "
        "it. Changed git control files are put back after the command and a renamed git dir moved back; the "
        "agent's config changes are reported.",
        "Directory listings of hidden directories are visible (their names); file contents are not.",
        "Only TCP is filtered (ABI 4+); UDP (including DNS) is not.",
        "No PID namespace: other processes and their command lines are visible; the agent's environment and memory "
        "are not.",
        "Children die with the agent through a watcher shell (PR_SET_PDEATHSIG) that kills the process group; a "
        "child that leaves the group (setsid) survives. Background processes outlive the command, as unconfined.",
        "The agent makes itself non-dumpable (so confined commands cannot read its environment) and confined "
        "commands run without capabilities, even as root.",
    ),
    "seatbelt": (
        "Network is all or nothing; no per-host rules.",
        "Children are not killed when the agent dies (no equivalent of a PID namespace).",
        "With the network granted, Unix sockets (docker's, ssh-agent's) are reachable too.",
        "Mach services stay reachable (e.g. the keychain through securityd, which may prompt).",
        "The generated profile is unit-tested as text only; this project's CI has no Mac.",
    ),
}
LANDLOCK_ABI_LIMITS = {
    4: "This kernel's Landlock ABI is below 4: network is NOT filtered.",
    6: "This kernel's Landlock ABI is below 6: signals and abstract Unix sockets outside the sandbox are reachable.",
}


def describe(
    confinement_root: Path,
    home: Path | None = None,
    hidden_paths: tuple[Path, ...] = (),
    read_only_paths: tuple[Path, ...] = (),
) -> dict:
    """What is enforced on this machine for a session in `confinement_root`, as JSON-ready data.
    `hidden_paths` and `read_only_paths` are the caller's own (the agent's data dir, its config files), as passed
    to `Confinement`."""
    found = mechanism()
    root = Path(os.path.realpath(confinement_root))
    levels = {}
    with tempfile.TemporaryDirectory(prefix="mini-agent-sandbox-describe-") as scratch:
        for level in LEVELS:
            asked = Confinement(level, root, hidden_paths=hidden_paths, read_only_paths=read_only_paths, home=home)
            resolved = plan(asked, Path(scratch))
            covered = services.covered(os.environ, home or Path.home(), resolved)
            writable = [str(path) for path in resolved.writable if path != resolved.tmpdir]
            levels[level] = {
                "writable": ["private TMPDIR (per command)", *writable],
                "read_only_inside_writable": [str(path) for path in resolved.read_only],
                "hidden": [str(path) for path in resolved.hidden],
                "network": "off unless granted per command",
            }
    if found is not None and found.name == "landlock":  # see LIMITS: listed, but not enforced there
        levels["workspace-write"]["read_only_inside_writable"] = []
    git = gitrepo.git_dirs(root)
    limits = list(COMMON_LIMITS)
    filtered = _seccomp(found.name if found else None)
    if found is not None:
        limits += LIMITS.get(found.name, ())
        if found.name in ("bubblewrap", "landlock") and filtered["unavailable_reason"]:
            limits.append(
                f"No seccomp filter ({filtered['unavailable_reason']}): a script can connect to any Unix socket it "
                "can reach (docker, ssh-agent, tmux). Install libseccomp2 and the pyseccomp package."
            )
        if found.name == "landlock":
            limits += [text for abi, text in LANDLOCK_ABI_LIMITS.items() if found.abi < abi]
    return {
        "mechanism": found.name if found else None,
        "detail": described(found) if found else None,
        "unavailable_reason": None if found else unavailable_reason(),
        "choice": f"{ENV_VARIABLE}={choice()}",
        "root": str(root),
        "levels": levels,
        "hidden_in_home": [f"~/{name}" for name in HIDDEN_IN_HOME] + ["~/.env*", ".env* in the root's ancestors"],
        "read_only_in_root": list(READ_ONLY_IN_ROOT) if found is None or found.name != "landlock" else [],
        "git": _git_protection(found.name if found else None, git, root),
        "seccomp": filtered,
        "service_sockets_covered": [str(path) for path in covered] if found and found.name == "bubblewrap" else [],
        "limits": limits,
    }


def _git_protection(name: str | None, git_dirs: tuple[Path, ...], root: Path) -> list[str]:
    """What guards the root's repository from workspace-write commands, in sentences."""
    if name is None or not git_dirs:
        return [] if name is None else ["No git repository at the project root: nothing to guard."]
    shown = ", ".join(gitrepo.CONTROL)
    where = ", ".join(_shown(path, root) for path in git_dirs)
    found = []
    if name == "bubblewrap":
        found.append(f"The git dir ({where}) is pinned: it cannot be renamed or removed.")
    if name in ("bubblewrap", "seatbelt"):
        found.append(f"Kept read-only there (those that exist): {shown}.")
    found.append(
        f"After each command: a change among {shown} is put back (the command's version moved to "
        f"{gitrepo.QUARANTINE}/ in the git dir), and you are told; so are new entries ordinary git work does not "
        "make, and deleted refs."
    )
    keep = " (read-only to commands)" if name == "bubblewrap" else ""
    found.append(
        f"Object files and reflogs have a second name (hard links) in {KEEP}/{keep}: when a command deletes "
        "history, the objects, reflogs, refs and HEAD are put back."
    )
    return found


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _seccomp(name: str | None) -> dict:
    """Whether confined commands run under the seccomp program here, and what it refuses."""
    if name not in ("bubblewrap", "landlock"):
        reason = "not used with this mechanism" if name else "no sandbox"
        return {"loaded": False, "refuses": [], "unavailable_reason": reason}
    reason = seccomp.unavailable_reason()
    return {
        "loaded": reason is None,
        "refuses": list(seccomp.REFUSED) if reason is None else [],
        "unavailable_reason": reason,
    }
