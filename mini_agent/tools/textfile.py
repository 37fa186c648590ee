"""Text files as the file tools see them: encoding and BOM, line endings, and atomic writes.

The model reads and writes `str` with `\n` line breaks; the file on disk may be Latin-1 with CRLF and a
missing final newline. This module keeps the two apart, so an edit changes only the bytes it meant to.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
from bisect import bisect_left
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from mini_agent.files.exact import open_directory
from mini_agent.files.pending import recorded
from mini_agent.tools.base import ToolError
from mini_agent.tools.file_view import binary_file_message

SAMPLE_BYTES = 64 * 1024
"""How much of a file decides its encoding: enough for a fair guess, small enough to stay fast on huge files."""
BINARY_PROBE_BYTES = 8 * 1024
"""A NUL byte in this many leading bytes (and no UTF-16/32 BOM) means the file is binary, as git decides."""
_CONTROL_CHARS_BINARY_RATIO = 0.1

# UTF-32 LE before UTF-16 LE: its BOM starts with the same two bytes.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# When several encodings decode a sample about equally well, charset_normalizer's first choice is close to
# arbitrary (for "café" it may offer an Urdu code page); prefer the ones most files are actually in.
_PREFERRED_LEGACY = [
    "cp1252",
    "latin_1",
    "gb18030",
    "gbk",
    "cp1251",
    "big5",
    "shift_jis",
    "cp932",
    "euc_jp",
    "euc_kr",
    "cp949",
    "cp1250",
    "koi8_r",
]
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\b\x1b")
_TEMPORARY_NAME_ROOM = 255 - len(".") - len(".0123456789abcdef.tmp")


@dataclass(frozen=True)
class Encoding:
    """How a file's text is stored: a codec, and the byte-order mark in front of it (if any)."""

    codec: str
    bom: bytes = b""

    @property
    def label(self) -> str:
        return f"{self.codec} with BOM" if self.bom else self.codec

    @property
    def ascii_newlines(self) -> bool:
        """Whether a 0x0A byte always means a line break, so lines can be counted on raw bytes."""
        return not self.codec.startswith(("utf-16", "utf-32"))

    def decode(self, data: bytes) -> str:
        return data[len(self.bom) :].decode(self.codec)

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.codec)


UTF8 = Encoding("utf-8")


def sniff_encoding(sample: bytes, complete: bool) -> Encoding | None:
    """The encoding of a file from its first bytes (`complete` when that is the whole file); None if binary."""
    for bom, codec in _BOMS:
        if sample.startswith(bom):
            return Encoding(codec, bom)
    if b"\0" in sample[:BINARY_PROBE_BYTES]:
        return None
    encoding = UTF8 if _is_utf8(sample, complete) else guess_legacy_encoding(sample)
    if encoding is None or _mostly_control_chars(sample[:BINARY_PROBE_BYTES], encoding):
        return None
    return encoding


def _is_utf8(sample: bytes, complete: bool) -> bool:
    # An incremental decoder tolerates a character cut in half at the end of a sample.
    try:
        codecs.getincrementaldecoder("utf-8")().decode(sample, final=complete)
    except UnicodeDecodeError:
        return False
    return True


def guess_legacy_encoding(sample: bytes) -> Encoding | None:
    """The most plausible non-UTF-8 encoding of some bytes (files and web pages alike), or None."""
    from charset_normalizer import from_bytes

    matches = from_bytes(sample)
    best = matches.best()
    if best is None:
        return None
    # Among the encodings that decode nearly as cleanly as the best, the most common one wins: the scores
    # of code pages for the same script differ by noise (clean French cp1252 text scores best as cp775).
    plausible = [match for match in matches if match.chaos <= best.chaos + 0.1]
    candidates = {name for match in plausible for name in match.could_be_from_charset}
    chosen = next((name for name in _PREFERRED_LEGACY if name in candidates), best.encoding)
    return Encoding(codecs.lookup(chosen).name)


def _mostly_control_chars(sample: bytes, encoding: Encoding) -> bool:
    text = sample.decode(encoding.codec, errors="replace")
    controls = sum(1 for char in text if char < " " and char not in _TEXT_CONTROLS)
    return bool(text) and controls / len(text) > _CONTROL_CHARS_BINARY_RATIO


def decode_file(path: Path, data: bytes) -> tuple[str, Encoding]:
    """The whole text of a file and its encoding; ToolError if it is binary or would not survive a rewrite."""
    encoding = sniff_encoding(data[:SAMPLE_BYTES], complete=len(data) <= SAMPLE_BYTES)
    if encoding is None:
        raise ToolError(binary_file_message(path, len(data)))
    try:
        text = encoding.decode(data)
    except UnicodeDecodeError:
        text, encoding = _decode_judging_everything(path, data, encoding)
    if encoding.encode(text) != data:
        raise ToolError(
            f"{path} would not be written back byte for byte in {encoding.label}, so it is not edited here. "
            "Use bash to change it."
        )
    return text, encoding


def _decode_judging_everything(path: Path, data: bytes, sampled: Encoding) -> tuple[str, Encoding]:
    """The sample looked like one encoding and a later part disagrees: guess again from all of the file."""
    retry = None if sampled.bom else guess_legacy_encoding(data)
    if retry is not None:
        with suppress(UnicodeDecodeError):
            return retry.decode(data), retry
    raise ToolError(
        f"{path} is not valid {sampled.label} text throughout, so it cannot be edited safely here. "
        "Use bash (e.g. sed or a short Python script) to change it."
    )


def dominant_newline(text: str) -> str:
    """CRLF if most line breaks in `text` are CRLF, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def count_lines(text: str) -> int:
    """Lines as an editor numbers them: a final line without a newline still counts."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


class LfView:
    """A text with every CRLF seen as LF (as the model writes it), and the way back to the original positions.

    Replacements are spliced into the original, so lines outside them keep their endings byte for byte; the
    replacement's own line breaks take the ending used where it lands.
    """

    def __init__(self, original: str) -> None:
        self.original = original
        self.text = original.replace("\r\n", "\n")
        # Index in `text` of each LF that was a CRLF in `original`.
        self._crlf_at = [match.start() - seen for seen, match in enumerate(re.finditer("\r\n", original))]

    def original_index(self, index: int) -> int:
        return index + bisect_left(self._crlf_at, index)

    def replace(self, spans: list[tuple[int, int]], replacement: str) -> str:
        """The original text with each (start, end) span of the view replaced by `replacement` (LF breaks)."""
        pieces: list[str] = []
        cursor = 0
        for start, end in spans:
            original_start, original_end = self.original_index(start), self.original_index(end)
            newline = self._newline_for(original_start, original_end)
            pieces += [self.original[cursor:original_start], replacement.replace("\n", newline)]
            cursor = original_end
        pieces.append(self.original[cursor:])
        return "".join(pieces)

    def _newline_for(self, start: int, end: int) -> str:
        """The line ending of the replaced text, else of the line it sits on, else of the line before."""
        region = self.original[start:end]
        if "\n" in region:
            return "\r\n" if "\r\n" in region else "\n"
        after = self.original.find("\n", end)
        at = after if after != -1 else self.original.rfind("\n", 0, start)
        return "\r\n" if at > 0 and self.original[at - 1] == "\r" else "\n"


def write_atomic(path: Path, data: bytes, data_dir: Path | None = None) -> None:
    """Replace the file's content in one step: a crash leaves the old file or the new one, never a mix.

    `path` is resolved (the one the permission policy checked, `ToolContext.checked`): its directory is opened
    without following any symlink (_exact.py), and the temporary file is written, flushed and renamed over the
    target inside that directory descriptor, so a symlink swapped in meanwhile is never written through (the
    write fails instead). The rename gives the name a new inode: other hard links to the old file keep the old
    content. An existing file keeps its permission bits (and owner, when we may set it); a new one gets the
    umask's default. With a `data_dir`, the temporary file is recorded there while it exists, so that the next
    start sweeps it if this process is killed.
    """
    directory = open_directory(path.parent)
    try:
        try:
            previous: os.stat_result | None = os.stat(path.name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            previous = None
        if previous is not None and not stat.S_ISREG(previous.st_mode):
            raise OSError(errno.ELOOP if stat.S_ISLNK(previous.st_mode) else errno.EINVAL, "not the checked file")
        name = _temporary_name(path.name)
        with recorded(path.parent / name, data_dir):
            # 0o666 lets the kernel apply the umask to a new file, as any editor's open(..., "w") would.
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(name, flags, 0o666, dir_fd=directory)
            try:
                with os.fdopen(fd, "wb") as stream:
                    stream.write(data)
                    stream.flush()
                    if previous is not None:
                        _copy_ownership_and_mode(stream.fileno(), previous)
                    os.fsync(stream.fileno())
                os.replace(name, path.name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                with suppress(OSError):
                    os.unlink(name, dir_fd=directory)
                raise
        with suppress(OSError):  # makes the rename itself durable; not possible (nor needed) everywhere
            os.fsync(directory)
    finally:
        os.close(directory)


def _temporary_name(name: str) -> str:
    """`.name.<16 hex>.tmp`, the name shortened so the whole stays within the 255 bytes a file name may have."""
    encoded = os.fsencode(name)
    if len(encoded) > _TEMPORARY_NAME_ROOM:
        name = os.fsdecode(encoded[:_TEMPORARY_NAME_ROOM])  # a character cut in two stays valid bytes
    return f".{name}.{os.urandom(8).hex()}.tmp"


def _copy_ownership_and_mode(fd: int, previous: os.stat_result) -> None:
    if (previous.st_uid, previous.st_gid) != (os.geteuid(), os.getegid()):
        with suppress(OSError):  # only root may give a file away; others keep their own ownership
            os.fchown(fd, previous.st_uid, previous.st_gid)
    os.fchmod(fd, stat.S_IMODE(previous.st_mode))  # after chown, which may clear set-id bits
