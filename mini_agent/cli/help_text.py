"""`mini-agent --help` without importing typer: the text typer renders, cached per version, the command-line
modules' mtimes and the width it was wrapped to.

Generating the help without typer would mean a second description of every option, bound to drift; a cache of
typer's own text is identical by construction, costs typer once per version and width, and is checked against
the sources each time (a stat of the few cli*.py files), so an edit shows at once.
"""

from __future__ import annotations

import os

from mini_agent import __version__
from mini_agent.locations import cache_dir

MAX_WIDTH = 80
"""click wraps help to the terminal's width, at most 80 columns."""


def _width(env) -> int:
    # shutil.get_terminal_size's rule (COLUMNS, then the terminal of stdout, then 80), without importing shutil.
    try:
        columns = int(env.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(1).columns
        except (OSError, ValueError):
            columns = 0
    return min(columns or 80, MAX_WIDTH)


def _sources_stamp() -> str:
    """The command line's own files (this package) and settings.py: what `--help`'s text is made from."""
    here = os.path.dirname(os.path.abspath(__file__))
    parts = []
    with os.scandir(here) as entries:
        for entry in entries:
            if entry.name.endswith(".py"):
                parts.append(f"{entry.name}:{entry.stat().st_mtime_ns}")
    settings = os.path.join(os.path.dirname(here), "settings.py")
    parts.append(f"settings.py:{os.stat(settings).st_mtime_ns}")
    return ",".join(sorted(parts))


def cache_file(env) -> str:
    name = f"help-{__version__}-{_width(env)}.txt"
    return os.path.join(cache_dir(env), name)


def cached(env) -> str | None:
    """The cached help text if it was made from the current sources at this width."""
    try:
        with open(cache_file(env), encoding="utf-8") as file:
            stamp, _, text = file.read().partition("\n")
    except (OSError, UnicodeDecodeError):
        return None
    return text if stamp == _sources_stamp() else None


def render_and_cache(env) -> str:
    """Typer's help text, as `--help` prints it, stored for the next time (best effort)."""
    from mini_agent.cli.main import command as built

    command = built()
    with command.make_context("mini-agent", [], resilient_parsing=True) as context:
        text = command.get_help(context) + "\n"
    path = cache_file(env)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}"
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(f"{_sources_stamp()}\n{text}")
        os.replace(temporary, path)
    except OSError:
        pass
    return text
