"""The OS sandbox shell commands run in: what a level allows, which mechanism enforces it here, and how to
start a command under it.

Two levels: `read-only` (no writes but a private TMPDIR and harmless devices) and `workspace-write` (also the
project root and the temp dirs, minus the git dir's control files and the agent's own config; the git dir pinned
where the mechanism can, and what changed there put back after the command: `gitguard` with `gitcapture` and
`gitrefs`, `gitkeep`). Both hide credential locations and the agent's data, keep the agent's process out of sight,
and cut the network unless the caller grants it. Mechanisms: bubblewrap or Landlock on Linux, Seatbelt on macOS,
probed once per process (`MINI_AGENT_SANDBOX` forces one, or `off`). The permission policy decides *whether* a
command runs and at which level; this package only enforces the level. May import what safety/ may.

    launch = confine(argv, env, cwd, Confinement("workspace-write", root))
    try:
        finished = run_launched(launch, cwd, timeout, output)    # processes/run.py
        hint = blocked(text, finished.returncode, confinement)   # "the sandbox blocked a write to ..." or None
        changed = launch.protected_changes()                     # what the mechanism could not block
        git = launch.git_changes()                               # git control files put back; `git.notice()`
    finally:
        launch.cleanup()
"""

from mini_agent.safety.sandbox.blocked import blocked
from mini_agent.safety.sandbox.confinement import LEVELS, Confinement, Level, Plan
from mini_agent.safety.sandbox.describe import describe
from mini_agent.safety.sandbox.launch import Launch, SandboxUnavailable, confine
from mini_agent.safety.sandbox.probe import ENV_VARIABLE, Mechanism, mechanism, unavailable_reason

__all__ = [
    "ENV_VARIABLE",
    "LEVELS",
    "Confinement",
    "Launch",
    "Level",
    "Mechanism",
    "Plan",
    "SandboxUnavailable",
    "blocked",
    "confine",
    "describe",
    "mechanism",
    "unavailable_reason",
]
