"""Links a command creates for its later parts: `ln -s ~ h && rm -rf h/` removes home, not a folder `h`.

The classifier runs before the command, so a link made by an earlier part does not exist yet when later paths
are resolved. This module reads `ln` and `cp -s` / `cp -l` as they are walked and records what each new link
points at; the workspace then resolves paths through it. A link to a place only known at run time points at
`/` for the checks, the worst place it could point.
"""

from __future__ import annotations

import os
from pathlib import Path

from mini_agent.safety.shell import argv, writes
from mini_agent.safety.shell.paths import Place
from mini_agent.safety.shell.words import Word
from mini_agent.safety.workspace import Workspace

VALUES = writes.VALUES["ln"]
"""Options of ln and cp that take a value (the same for both)."""
UNKNOWN = Path("/")


def after(name: str, arguments: tuple[Word, ...], place: Place) -> Place:
    """The place after this command, with the links it creates recorded."""
    if name not in ("ln", "cp", "link"):
        return place
    if name == "link":  # `link FILE NEW`: a hard link, no options
        arguments = (Word("-P", "-P"), *arguments)
        name = "ln"
    args = argv.parse(arguments, VALUES)
    if name == "cp" and not args.has("-s", "--symbolic-link", "-l", "--link"):
        return place
    symbolic = args.has("-s", "--symbolic", "--symbolic-link")
    operands = list(args.operands)
    directory = args.value("-t", "--target-directory")
    if directory:
        pairs = [(source, directory[0], True) for source in operands]
    elif len(operands) == 1:
        pairs = [(operands[0], Word(".", "."), True)]
    else:
        pairs = [(source, operands[-1], len(operands) > 2) for source in operands[:-1]]
    for source, destination, into in pairs[:32]:
        for view in place.views(Word(".", ".")):  # from every directory the shell may be in
            link = _link(source, destination, into, place, view)
            if link is not None:
                place = place.linked(link, _target(source, link, symbolic, place, view))
    return place


def _link(source: Word, destination: Word, into: bool, place: Place, view: Workspace) -> Path | None:
    if not place.known(destination):
        return None
    if (destination.value or "").startswith(("/", "~")):
        view = place.workspace
    path = view.resolve(destination.value or ".")
    if into or path.is_dir() or (destination.value or "").endswith("/"):  # `ln -s ~ dir/` makes dir/<source's name>
        name = os.path.basename((source.value or "").rstrip("/"))
        if name.startswith("~") or name in ("", ".", ".."):
            name = view.resolve(source.value or ".").name if place.known(source) else "link"
        return path / name
    return path


def _target(source: Word, link: Path, symbolic: bool, place: Place, view: Workspace) -> Path:
    value = source.value
    if value is None or not place.known(source):
        return UNKNOWN
    if symbolic and not value.startswith(("/", "~")):  # a relative symlink points from the link's folder
        return view.through_links(Path(os.path.realpath(link.parent / value)))
    return view.resolve(value)
