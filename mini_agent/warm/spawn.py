"""Start a warm server in the background: detached (its own session), stdio on /dev/null, an environment with
nothing of the user's but what the interpreter needs to find its modules (no key, no token, no project)."""

from __future__ import annotations

import os
import sys

KEPT = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "XDG_RUNTIME_DIR", "MINI_AGENT_SERVER_IDLE")
KEPT_PREFIXES = ("PYTHON",)
"""The interpreter's own settings (module path, bytecode cache): the server must import what the client would."""
CODE = "from mini_agent.serve.server import main; main()"


def server_environment(env: dict[str, str]) -> dict[str, str]:
    return {name: value for name, value in env.items() if name in KEPT or name.startswith(KEPT_PREFIXES)}


def start_server(after: int | None = None) -> int | None:
    """Spawn a server; it starts loading once process `after` has exited or a few seconds have passed, so it
    does not compete with the run that started it. The pid, or None when it could not be started."""
    argv = [sys.executable, "-P", "-c", CODE]
    if after is not None:
        argv += ["--after", str(after)]
    try:
        return os.posix_spawn(
            sys.executable,
            argv,
            server_environment(dict(os.environ)),
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDWR, 0),
                (os.POSIX_SPAWN_DUP2, 0, 1),
                (os.POSIX_SPAWN_DUP2, 0, 2),
            ],
            setsid=True,
        )
    except OSError:
        return None
