"""The `mini-agent` command's first steps, before anything heavy is imported.

`--version` and `--help` are answered here. Otherwise the invocation goes to the warm server when one is up
(mini_agent/warm/), and runs here, the normal way, when none is or when anything about it is wrong; a run
that found no server starts one in the background for the next invocation. Either way the process ends as
the interpreter would, less its teardown of every module (process_end.py).
"""

from __future__ import annotations

import os
import sys

from mini_agent import __version__

OFF_VALUES = ("1", "true", "yes", "on")


def main() -> None:
    arguments = sys.argv[1:]
    if arguments == ["--version"]:
        print(f"mini-agent {__version__}")
        return
    if arguments in (["--help"], ["-h"]):
        from mini_agent.cli import help_text

        text = help_text.cached(os.environ)
        if text is None:
            text = help_text.render_and_cache(os.environ)
        sys.stdout.write(text)
        return
    start = False
    # `acp` owns its stdio and its signals for as long as the editor runs it: never handed to the warm server.
    if arguments[:1] != ["server"] and "acp" not in arguments and warm_start_enabled():
        from mini_agent.warm.client import hand_over

        outcome = hand_over(sys.argv)
        if isinstance(outcome, int):
            sys.stdout.flush()
            os._exit(outcome)  # nothing of ours to flush or tear down: the worker did the work
        start = outcome.start
    if start and worth_a_server(arguments, os.environ):
        from mini_agent.warm.spawn import start_server

        start_server(after=os.getpid())
    from mini_agent import gc_pause

    gc_pause.pause()  # while the imports pile up objects that live as long as the process (gc_pause.py)
    from mini_agent.cli.main import main as run_here
    from mini_agent.process_end import run_and_exit

    run_and_exit(run_here)


ONE_OFF_COMMANDS = ("config", "permissions", "check-command", "undo", "sandbox", "mcp", "server", "acp")
"""Subcommands after which no server is started: they talk to no model (or, `acp`, run for an editor's whole
session), and a server costs ~3 s of CPU and ~150 MB for ten minutes."""


def worth_a_server(arguments: list[str], env, isatty=os.isatty) -> bool:
    """Whether a run that found no server should start one for the next: not after a one-off subcommand, and not
    in CI without a terminal (a CI job or a container is gone before a next run could use it)."""
    if arguments[:1] and arguments[0] in ONE_OFF_COMMANDS:
        return False
    if env.get("CI", "").lower() not in ("", "0", "false", "no"):
        return any(_isatty(isatty, fd) for fd in (0, 1, 2))
    return True


def _isatty(isatty, fd: int) -> bool:
    try:
        return isatty(fd)
    except OSError:
        return False


def warm_start_enabled() -> bool:
    """Off with MINI_AGENT_NO_SERVER=1, with `warm_start = false` in the user's config, and where the platform
    cannot tell who is at the other end of a socket (SO_PEERCRED is Linux's)."""
    if os.environ.get("MINI_AGENT_NO_SERVER", "").lower() in OFF_VALUES or not sys.platform.startswith("linux"):
        return False
    return _config_allows()


def _config_allows() -> bool:
    # The user's config.toml is parsed only when it mentions the setting: tomllib costs more than the rest.
    from mini_agent.locations import user_dir

    try:
        with open(os.path.join(user_dir(os.environ), "config.toml"), "rb") as file:
            data = file.read()
    except OSError:
        return True
    if b"warm_start" not in data:
        return True
    import tomllib

    try:
        return tomllib.loads(data.decode("utf-8")).get("warm_start", True) is not False
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return False  # the normal path reports the broken file
