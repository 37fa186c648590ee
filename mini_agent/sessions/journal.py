"""One session file: JSON lines appended as the log grows, and read back up to the first damaged line.

Line 1 is the header (`{"type": "session", ...}`); every later line is one log entry (see session.py) with one
extra key at its very end, `"messages_so_far": N`, the number of message entries up to and including that line.
A listing reads it from the last few bytes of the file instead of counting lines; loading strips it again.

Each line goes to the kernel with one write as it is logged (no user-space buffer): a crash, Ctrl-C or kill -9
loses at most the line being written. fsync happens on `sync()` and `close()` only: at ~0.3 ms here and up to
tens of ms on a busy disk it would be paid on every step, to guard only against the machine itself going down.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mini_agent.errors import MiniAgentError
from mini_agent.safety.secrets import SecretSet

FORMAT_VERSION = 1
COUNT_KEY = "messages_so_far"


class SessionBusy(MiniAgentError):
    """Another mini-agent process is writing this session."""


class SessionChanged(MiniAgentError):
    """The session file changed between loading it and reopening it: load it again."""


@dataclass(frozen=True)
class Journal:
    """What a session file holds, read up to the first damaged line."""

    header: dict | None
    entries: list[dict]
    damaged: str | None
    """Where reading stopped and why; None when every line was whole."""
    valid_bytes: int
    """The file's length up to the end of the last whole entry: a writer continues from here."""
    size: int


def read_journal(data: bytes) -> Journal:
    """Parse a session file's bytes; everything before the first damaged line is kept, nothing raises."""
    header: dict | None = None
    entries: list[dict] = []
    position = 0
    number = 0
    while position < len(data):
        number += 1
        end = data.find(b"\n", position)
        value = _json_object(data[position:] if end == -1 else data[position:end])
        if value is None or (value.get("type") == "session") != (number == 1) or not isinstance(value.get("type"), str):
            return Journal(header, entries, _damage(data, position, number, end), position, len(data))
        if number == 1:
            header = value
        else:
            value.pop(COUNT_KEY, None)
            entries.append(value)
        # A last line without its newline is still whole when it parses: a JSON object cannot end early.
        position = len(data) if end == -1 else end + 1
    return Journal(header, entries, None, position, len(data))


def _json_object(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # bad JSON, a UTF-8 sequence cut in two
        return None
    return value if isinstance(value, dict) else None


def _damage(data: bytes, position: int, number: int, end: int) -> str:
    if end == -1:
        return f"line {number} (byte {position}) is cut off; its {len(data) - position} bytes were not read"
    rest = data[end + 1 :]
    later = rest.count(b"\n") + (1 if rest and not rest.endswith(b"\n") else 0)
    what = "the session header" if number == 1 else "a log entry"
    skipped = f"; the {later} lines after it were not read" if later else ""
    return f"line {number} (byte {position}) is not {what}{skipped}"


class SessionWriter:
    """Appends log entries to one session file, each as one line written at once, secrets masked."""

    def __init__(
        self, path: Path, header: dict | None, secrets: Sequence[str] | SecretSet = (), messages: int = 0
    ) -> None:
        """`header` starts a new file on the first write (a session never written leaves no file); None continues
        an existing file, opened by `continue_file`. `messages` is the count of message entries already in it."""
        self.path, self._header, self._messages = path, header, messages
        # The session's SecretSet (it grows as the agent reads credential files), or a fixed list of values.
        self._secrets = secrets if isinstance(secrets, SecretSet) else SecretSet((value, "") for value in secrets)
        self._fd: int | None = None
        self._newline_first = False
        self._lock = threading.Lock()
        self.error: OSError | None = None
        """The first write that failed (disk full, ...): the writer stops there, the agent carries on."""

    @classmethod
    def continue_file(
        cls, path: Path, journal: Journal, header: dict, secrets: Sequence[str] | SecretSet = ()
    ) -> SessionWriter:
        """Append to the session file `journal` was read from; a damaged tail is moved aside first, to
        `<name>.damaged-<offset>`, and `header` is written again if even the header was damaged.

        Truncating rather than starting on a fresh line keeps the file one whole log: a damaged line left in the
        middle would stop every later load there and hide what follows it.
        """
        size, valid_bytes = journal.size, journal.valid_bytes
        messages = sum(entry["type"] == "message" for entry in journal.entries)
        writer = cls(path, header if valid_bytes == 0 else None, secrets, messages)
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
        try:
            _lock(fd, path)
            current = os.fstat(fd).st_size
            if current != size:
                raise SessionChanged(f"{path} changed since it was loaded ({size} -> {current} bytes); load it again.")
            if size > valid_bytes:
                _private_file(Path(f"{path}.damaged-{valid_bytes}"), os.pread(fd, size - valid_bytes, valid_bytes))
                os.ftruncate(fd, valid_bytes)
            writer._newline_first = valid_bytes > 0 and os.pread(fd, 1, valid_bytes - 1) != b"\n"
            writer._fd = fd
            if writer._header is not None:
                writer._write(writer._line(writer._header))
        except BaseException:
            os.close(fd)
            raise
        return writer

    @property
    def id(self) -> str:
        return session_id(self.path)

    def write(self, entry: dict) -> None:
        """Append one log entry (Session.attach's sink)."""
        with self._lock:
            if self.error is not None:
                return
            try:
                if self._fd is None:
                    self._start()
                if entry.get("type") == "message":
                    self._messages += 1
                self._write(self._line({**entry, COUNT_KEY: self._messages}))
            except OSError as exc:
                self.error = exc

    def sync(self) -> None:
        """Make what was written survive a power cut too (the end of a turn is a good moment)."""
        with self._lock:
            if self._fd is not None and self.error is None:
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    self.error = exc

    def close(self) -> None:
        self.sync()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> SessionWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _start(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        try:
            _lock(fd, self.path)
            self._fd = fd
        except BaseException:
            os.close(fd)
            raise
        if self._header is not None:
            self._write(self._line(self._header))

    def _line(self, entry: dict) -> bytes:
        data = _encoded(self._secrets.mask_value(entry))  # every string, in any encoding of any known secret
        if self._newline_first:
            data, self._newline_first = b"\n" + data, False
        return data + b"\n"

    def _write(self, data: bytes) -> None:
        assert self._fd is not None
        _write_all(self._fd, data)


def session_id(path: Path) -> str:
    """The short id at the end of a session file's name, `<YYYYmmdd-HHMMSS>-<id>.jsonl`."""
    return path.name.removesuffix(".jsonl").rsplit("-", 1)[-1]


def _encoded(entry: dict) -> bytes:
    try:
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (undecodable bytes kept by a tool): escaped, losslessly
        return json.dumps(entry, separators=(",", ":")).encode("ascii")


def _private_file(path: Path, data: bytes) -> None:
    """Write a file only its owner can read: a session's text is as private as the session."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _lock(fd: int, path: Path) -> None:
    """An advisory lock for the writer's lifetime: two processes appending to one session would interleave."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system: no lock, as before
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SessionBusy(f"The session {path} is open in another mini-agent process.") from None
