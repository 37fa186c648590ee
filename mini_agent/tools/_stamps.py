"""What a file looked like when the agent last read or wrote it: the basis of read-before-edit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HASHED_UP_TO = 64 * 1024 * 1024
"""Files up to this size are fingerprinted by content (sha256, ~50 ms for the largest); bigger ones by metadata."""


@dataclass(frozen=True)
class FileStamp:
    """What a file looked like when the agent last read or wrote it.

    Size and mtime alone can lie: a same-size change within one timestamp tick (coarse clocks, 1-2 s on some
    file systems) or a `touch -r` back keeps both. So the stamp holds a hash of the content, and only a
    different content makes the file stale: a `touch` alone does not. Files over HASHED_UP_TO are not hashed
    (reading a page of a huge log must stay cheap); for them any change of size, mtime, ctime or inode counts.
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    identity: tuple[int, int]
    """(device, inode): a file replaced by another one is a different file even with the same times."""
    digest: bytes | None

    @classmethod
    def of(cls, path: Path, data: bytes | None = None) -> FileStamp:
        """The file as it is now; `data`, when given, is its whole content (what we just wrote or read)."""
        info = path.stat()
        if info.st_size > HASHED_UP_TO:
            data_digest: bytes | None = None
        else:
            data_digest = _digest(data) if data is not None else _file_digest(path)
        return cls(info.st_size, info.st_mtime_ns, info.st_ctime_ns, (info.st_dev, info.st_ino), data_digest)

    def unchanged(self, path: Path, data: bytes | None = None) -> bool:
        """Whether the file still holds what this stamp saw; `data` is its current content when already read."""
        info = path.stat()
        if info.st_size != self.size:
            return False
        if self.digest is None:
            return (info.st_mtime_ns, info.st_ctime_ns, (info.st_dev, info.st_ino)) == (
                self.mtime_ns,
                self.ctime_ns,
                self.identity,
            )
        return (_digest(data) if data is not None else _file_digest(path)) == self.digest


def _digest(data: bytes) -> bytes:
    import hashlib

    return hashlib.sha256(data).digest()


def _file_digest(path: Path) -> bytes:
    import hashlib

    with open(path, "rb") as stream:
        return hashlib.file_digest(stream, "sha256").digest()
