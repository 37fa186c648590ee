"""Text the operating system cannot take, refused while the arguments are validated, before anything uses them.

A tool's arguments reach the permission gate (which resolves paths), the diff preview and the tool itself; a NUL
byte or an unpaired surrogate makes each of those raise something other than OSError (ValueError,
UnicodeEncodeError) at a different place. Checking once, in argument validation, turns all of them into one
is_error result that names the parameter, the problem and where it is, and nothing downstream sees such text.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

PATH_MAX_BYTES = 4096
"""Linux's PATH_MAX: the longest path (with its final NUL) a system call accepts."""
NAME_MAX_BYTES = 255
"""The longest file name (one path component) on every common file system."""
CUSTOM_ERRORS = frozenset({"invalid_path", "nul_byte"})
"""Error types raised here, whose messages read as a sentence about the parameter."""


def unpaired_surrogate(text: str) -> str | None:
    """Why a string is not valid Unicode text (JSON can carry a lone `\\ud800`), or None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (
            f"contains an unpaired surrogate ({exc.object[exc.start]!r} at character {exc.start + 1}), which is not "
            "valid Unicode text; send the characters themselves (a JSON \\u escape for a surrogate must come as a "
            "valid high-low pair)"
        )
    return None


def path_problem(text: str) -> str | None:
    """Why no file can have this path, or None: empty, a NUL byte, invalid Unicode, too long for the OS."""
    if not text:
        return "is empty; give the path of a file, e.g. `src/app.py`"
    problem = _nul(text, "no file name can hold one; check the path for a stray control character")
    if problem or (problem := unpaired_surrogate(text)):
        return problem
    encoded = text.encode("utf-8")
    if len(encoded) >= PATH_MAX_BYTES:
        return f"is {len(encoded):,} bytes long; the system limits a path to {PATH_MAX_BYTES - 1:,} bytes"
    longest = max(encoded.split(b"/"), key=len)
    if len(longest) > NAME_MAX_BYTES:
        shown = longest[:40].decode("utf-8", errors="replace")
        return (
            f"has a name of {len(longest):,} bytes ('{shown}…'); the system limits one file or directory name "
            f"to {NAME_MAX_BYTES} bytes"
        )
    return None


def _nul(text: str, why: str) -> str | None:
    at = text.find("\0")
    return None if at < 0 else f"contains a NUL byte (\\x00) at character {at + 1}; {why}"


def _check_path(text: str) -> str:
    problem = path_problem(text)
    if problem:
        raise PydanticCustomError("invalid_path", problem)
    return text


def _check_command(text: str) -> str:
    problem = _nul(text, "a command line cannot pass one to bash (to produce a NUL byte, write printf '\\0')")
    if problem:
        raise PydanticCustomError("nul_byte", problem)
    return text


PathText = Annotated[str, AfterValidator(_check_path)]
"""A file path argument: refused when no file could have it, with the reason."""
CommandText = Annotated[str, AfterValidator(_check_command)]
"""A shell command argument: refused when it holds a NUL byte, which exec cannot pass on."""
