"""The human's text editor on a text of the agent's (a plan to change before approving it): $VISUAL, else
$EDITOR, else the first of a few usual ones, run on a private temporary file with the terminal handed over until
it exits, and without the agent's own credentials in its environment."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile

from mini_agent.processes.run import child_environment

FALLBACKS = ("editor", "nano", "vi")


def editor_command(env: dict[str, str] | os._Environ[str] = os.environ) -> list[str] | None:
    """The editor to run, as argv without the file; None when none is set or found."""
    for variable in ("VISUAL", "EDITOR"):
        if env.get(variable, "").strip():
            try:
                return shlex.split(env[variable])
            except ValueError:
                return None
    found = next((shutil.which(name) for name in FALLBACKS if shutil.which(name)), None)
    return [found] if found else None


def edit_text(text: str, suffix: str = ".md") -> str | None:
    """What the human saved after editing `text`; None when no editor could be run or it failed (the text as
    it was is then still theirs to approve or not)."""
    command = editor_command()
    if command is None:
        return None
    handle, path = tempfile.mkstemp(prefix="mini-agent-", suffix=suffix)  # 0600: only the human reads it
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        try:
            done = subprocess.run([*command, path], env=child_environment(), check=False)
        except OSError:
            return None
        if done.returncode != 0:
            return None
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read()
    finally:
        os.unlink(path)
