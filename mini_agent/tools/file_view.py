"""What the file tools say about paths that are not usable text files, and how they number lines.

Every message names the path and suggests the next step, because the model can only fix what it is told.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from itertools import islice
from pathlib import Path

from mini_agent.tools.base import ToolError

MAX_LINE_CHARS = 2000
CUT_MARKER = f"… [line cut at {MAX_LINE_CHARS} characters]"
_LISTED_ENTRIES = 20
_SCANNED_ENTRIES = 5000
"""Directory entries looked at for listings and near-name suggestions: bounded, for huge directories."""


def cut_line(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + CUT_MARKER


def numbered(lines: Iterable[str], first: int) -> str:
    """Lines as `cat -n` prints them: the number right-aligned in six columns, a tab, the (cut) line."""
    return "\n".join(f"{number:>6}\t{cut_line(line)}" for number, line in enumerate(lines, first))


def require_regular_file(path: Path, action: str = "read") -> os.stat_result:
    """The file's stat; ToolError for a missing path, a directory, a device or fifo, or no permission."""
    try:
        info = path.stat()
    except OSError as exc:
        raise ToolError(os_error_message(exc, path, action)) from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(directory_message(path))
    if not stat.S_ISREG(info.st_mode):
        raise ToolError(f"{path} is not a regular file (it is a {_kind(info.st_mode)}); only files can be {action}.")
    return info


def os_error_message(exc: OSError, path: Path, action: str) -> str:
    """A failed open/stat/write explained in terms of what the model can do about it."""
    if exc.errno in (errno.ELOOP, errno.EXDEV):
        return (
            f"Cannot {action} {path}: the path changed after the permission check (a part of it is a symbolic "
            "link now, or leads elsewhere), so it was not followed. Something else is changing it: look with "
            "bash (`ls -l`) before trying again."
        )
    if isinstance(exc, PermissionError):
        return (
            f"Permission denied: cannot {action} {path} (the file or a directory above it is not accessible "
            "to this user). Ask the user to change its permissions if you need it."
        )
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return missing_path_message(path)
    if isinstance(exc, IsADirectoryError):
        return directory_message(path)
    return f"Cannot {action} {path}: {exc.strerror or exc}."


def missing_path_message(path: Path) -> str:
    """Say what exists nearest to a missing path: similar names beside it, or the deepest existing folder."""
    if os.path.islink(path):
        return f"{path} is a symbolic link to {os.readlink(path)}, which does not exist."
    ancestor = path.parent
    while not os.path.isdir(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    missing = path.relative_to(ancestor).parts[0]
    if os.path.lexists(ancestor / missing) and ancestor / missing != path:
        return f"{path} does not exist: {ancestor / missing} is a file, not a directory."
    if ancestor == path.parent:
        message = f"{path} does not exist."
    else:
        message = f"{path} does not exist: the nearest existing directory is {ancestor}, which has no '{missing}'."
    similar = _similar_names(ancestor, missing)
    if similar:
        message += f" Similar names in {ancestor}: {', '.join(similar)}."
    return message + " Check the path (bash `ls` or `find` can help)."


def directory_message(path: Path) -> str:
    entries = _entry_names(path)
    shown = sorted(entries)[:_LISTED_ENTRIES]
    listing = ", ".join(shown) if shown else "nothing"
    hidden = len(entries) - len(shown)
    more = f" and {hidden}{'+' if len(entries) >= _SCANNED_ENTRIES else ''} more" if hidden else ""
    return (
        f"{path} is a directory, not a file. It contains: {listing}{more}. "
        "Give the path of a file, not of a directory; bash (`ls`, `find`) can explore it."
    )


def binary_file_message(path: Path, size: int) -> str:
    import mimetypes

    kind = mimetypes.guess_type(path.name)[0]
    described = f"{size:,} bytes" + (f", {kind}" if kind else "")
    return (
        f"{path} is a binary file ({described}); read_file shows text and images (PNG, JPEG, GIF, WebP, BMP, "
        "TIFF) only. "
        f"Use bash to inspect it (e.g. `file {path.name}` or `xxd {path.name} | head`)."
    )


def ensure_parent_directory(path: Path) -> None:
    """Create the folders a new file needs at the resolved `path`, following no symlink on the way (see _exact),
    explaining why when that is impossible."""
    from mini_agent.files.exact import open_directory

    try:
        os.close(open_directory(path.parent, create=True))
    except (FileExistsError, NotADirectoryError):
        raise ToolError(_not_a_directory(path)) from None
    except OSError as exc:
        raise ToolError(os_error_message(exc, path.parent, "create the directory")) from None


def parent_problem(path: Path) -> None:
    """ensure_parent_directory's refusal when a file stands where a folder of `path` should be, creating nothing."""
    ancestor = path.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not os.path.isdir(ancestor):
        raise ToolError(_not_a_directory(path))


def _not_a_directory(path: Path) -> str:
    return f"Cannot create {path}: a part of {path.parent} is an existing file, not a directory."


def _entry_names(directory: Path) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            return [entry.name + ("/" if entry.is_dir() else "") for entry in islice(entries, _SCANNED_ENTRIES)]
    except OSError:
        return []


def _similar_names(directory: Path, name: str) -> list[str]:
    import difflib

    entries = _entry_names(directory)
    by_bare_name = {entry.rstrip("/"): entry for entry in entries}
    same_but_case = [entry for bare, entry in by_bare_name.items() if bare.lower() == name.lower()]
    close = difflib.get_close_matches(name, list(by_bare_name), n=3, cutoff=0.6)
    return list(dict.fromkeys(same_but_case + [by_bare_name[bare] for bare in close]))[:3]


def _kind(mode: int) -> str:
    kinds = {
        stat.S_ISFIFO: "named pipe",
        stat.S_ISSOCK: "socket",
        stat.S_ISCHR: "character device",
        stat.S_ISBLK: "block device",
    }
    return next((kind for test, kind in kinds.items() if test(mode)), "special file")
