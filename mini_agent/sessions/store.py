"""Where sessions live and how they are found: one directory per project, one JSONL file per session.

    <data_dir>/sessions/<project key>/<YYYYmmdd-HHMMSS>-<id>.jsonl

The project key is a readable slug of the working directory's real path plus a short hash of it, so
/a/b-c and /a/b/c get different directories. Listing reads each file's header, its first lines up to the
first typed prompt, and its last bytes (the message count); it never parses a whole file.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mini_agent import __version__
from mini_agent.conversation import Session
from mini_agent.errors import ConfigError
from mini_agent.safety.secrets import SecretSet
from mini_agent.sessions.journal import (
    COUNT_KEY,
    FORMAT_VERSION,
    Journal,
    SessionWriter,
    read_journal,
    session_id,
)
from mini_agent.sessions.rewind import REWIND, conversation_entries

SLUG_CHARS = 48
"""The end of the path is kept when it is longer: the project's own name is what a person looks for."""
PROMPT_CHARS = 200
PROMPT_SEARCH_LINES = 8
"""Lines after the header searched for the first typed prompt (it is normally the very first)."""
_TAIL_BYTES = 64
_ERROR_TAIL_BYTES = 4096
"""Bytes read from a file's end to find a turn-ending error (session.py keeps those entries under ~1 KiB)."""
_BOOKKEEPING = ("checkpoint", "undone", "changing", "unchanged", "hints", "usage", "model", REWIND, "images_removed")
_SPENDING = ("usage", "subagent", "model")
_TAIL_COUNT = re.compile(rb'"' + COUNT_KEY.encode() + rb'":(\d+)\}\n\Z')
_TYPED_START = b'{"type":"message","typed":'
_MESSAGE_LINE = b'\n{"type":"message",'


class SessionNotFound(ConfigError):
    """No stored session of this project matches the id the user gave."""


@dataclass(frozen=True)
class SessionInfo:
    """A stored session as a listing shows it."""

    id: str
    path: Path
    created: datetime
    modified: datetime
    """The last write: sessions are listed and continued by this."""
    first_prompt: str
    """The first words the user typed, on one line, cut to PROMPT_CHARS."""
    messages: int
    bytes: int
    cwd: str
    model: str
    stopped: str = ""
    """Why the last turn stopped when an error ended it (its kind: api, step_limit, overflow, error); "" if not."""


@dataclass(frozen=True)
class LoadedSession:
    info: SessionInfo
    header: dict
    entries: list[dict]
    """The log the conversation stands on, as `Session.restore` takes it: rewound branches left out
    (sessions/rewind.py). The whole file's entries are `journal.entries`."""
    damaged: str | None
    """Where the file is damaged (a cut last line, a line that is not JSON) and what was not read; None if whole."""
    journal: Journal

    def restore(self) -> Session:
        model = str((self.header or {}).get("model", ""))
        session = Session.restore(self.entries, model)
        if self.entries is not self.journal.entries:  # rewound: the abandoned branches' tokens were spent all the same
            spent = Session.restore([e for e in self.journal.entries if e["type"] in _SPENDING], model)
            session.usage, session.usage_by_model = spent.usage, spent.usage_by_model
        return session


class SessionStore:
    def __init__(self, data_dir: Path, secrets: Sequence[str] | SecretSet = ()) -> None:
        """`secrets` are masked in every line written, in any encoding (the session's Settings.secret_set)."""
        self.root = Path(data_dir) / "sessions"
        self.secrets = secrets if isinstance(secrets, SecretSet) else tuple(secrets)

    def project_dir(self, cwd: Path | str) -> Path:
        return self.root / project_key(cwd)

    def create(self, cwd: Path | str, model: str) -> SessionWriter:
        """A writer for a new session; its file appears with the first entry written."""
        path, header = self._new(cwd, model)
        return SessionWriter(path, header, self.secrets)

    def fork(self, original: LoadedSession, cwd: Path | str, model: str) -> LoadedSession:
        """A new session of `cwd` holding `original`'s whole log (sessions/fork.py); the original is only read."""
        from mini_agent.sessions.fork import copied_entries, write_fork

        path, header = self._new(cwd, model or original.info.model)
        header["forked_from"] = original.info.id
        entries = copied_entries(original.journal.entries, original.info.path)
        write_fork(path, header, entries, self.secrets, self.root.parent)
        return self.load(path, cwd)

    def reopen(self, loaded: LoadedSession) -> SessionWriter:
        """A writer that continues a loaded session's file (SessionBusy if another process has it open)."""
        header = loaded.header or _header(loaded.info.id, loaded.info.cwd, loaded.info.model, loaded.info.created)
        return SessionWriter.continue_file(loaded.info.path, loaded.journal, header, self.secrets)

    def _new(self, cwd: Path | str, model: str) -> tuple[Path, dict]:
        """A new session's file name (not created yet) and header."""
        now = datetime.now().astimezone()
        short_id = secrets.token_hex(4)
        return self.project_dir(cwd) / f"{now:%Y%m%d-%H%M%S}-{short_id}.jsonl", _header(short_id, cwd, model, now)

    def list(self, cwd: Path | str) -> builtins.list[SessionInfo]:
        """This project's sessions, most recently written first."""
        files = self._files(cwd)
        files.sort(key=lambda item: (item[1].st_mtime_ns, item[0].name), reverse=True)
        found = (_summary(path, stat) for path, stat in files)
        return [info for info in found if info is not None]

    def latest(self, cwd: Path | str) -> SessionInfo | None:
        """The session written last (what --continue picks); None when the project has none."""
        files = self._files(cwd)
        if not files:
            return None
        path, stat = max(files, key=lambda item: (item[1].st_mtime_ns, item[0].name))
        return _summary(path, stat) or self.latest(cwd)

    def load(self, session: SessionInfo | Path | str, cwd: Path | str) -> LoadedSession:
        """Read a session of this project, by listing entry, file or id (a unique prefix will do)."""
        if isinstance(session, Path):
            path = session
        else:
            path = session.path if isinstance(session, SessionInfo) else self._find(session, cwd)
        journal = read_journal(path.read_bytes())
        stat = path.stat()
        header = journal.header or {}
        entries = conversation_entries(journal.entries)
        typed = next((e["typed"] for e in journal.entries if e["type"] == "message" and "typed" in e), "")
        info = SessionInfo(
            id=session_id(path),
            path=path,
            created=_created(header, path, stat),
            modified=datetime.fromtimestamp(stat.st_mtime).astimezone(),
            first_prompt=_one_line(typed),
            messages=sum(entry["type"] == "message" for entry in journal.entries),
            bytes=journal.size,
            cwd=str(header.get("cwd", "")),
            model=str(header.get("model", "")),
            stopped=_stopped([e for e in entries if e["type"] not in _BOOKKEEPING][-1:]),
        )
        return LoadedSession(info, header, entries, journal.damaged, journal)

    def _files(self, cwd: Path | str) -> builtins.list[tuple[Path, os.stat_result]]:
        try:
            entries = list(os.scandir(self.project_dir(cwd)))
        except FileNotFoundError:
            return []
        return [(Path(entry.path), entry.stat()) for entry in entries if entry.name.endswith(".jsonl")]

    def _find(self, wanted: str, cwd: Path | str) -> Path:
        matches = [path for path, _ in self._files(cwd) if session_id(path).startswith(wanted)]
        exact = [path for path in matches if session_id(path) == wanted]
        if len(exact) == 1 or len(matches) == 1:
            return (exact or matches)[0]
        where = f"{os.path.abspath(cwd)} (stored in {self.project_dir(cwd)})"
        if not wanted or not matches:
            raise SessionNotFound(f"No session {wanted!r} for {where}.")
        ids = ", ".join(sorted(session_id(path) for path in matches))
        raise SessionNotFound(f"{wanted!r} matches several sessions of {where}: {ids}. Give more of the id.")


def project_key(cwd: Path | str) -> str:
    """A directory name for a project: readable, filesystem-safe, and unique through a hash of the real path."""
    real = os.path.realpath(cwd)
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", real)[-SLUG_CHARS:].strip("-.") or "root"
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:10]
    return f"{slug}-{digest}"


def _header(short_id: str, cwd: Path | str, model: str, created: datetime) -> dict:
    return {
        "type": "session",
        "id": short_id,
        "cwd": os.path.abspath(cwd),
        "model": model,
        "created": created.isoformat(timespec="seconds"),
        "version": FORMAT_VERSION,
        "mini_agent": __version__,
    }


def _summary(path: Path, stat: os.stat_result) -> SessionInfo | None:
    """A listing entry from the header, the first prompt and the count at the end of the file; None if it is gone."""
    try:
        file = open(path, "rb")
    except FileNotFoundError:  # deleted since the directory was read
        return None
    with file:
        header = _loads(file.readline()) or {}
        typed = ""
        for _ in range(PROMPT_SEARCH_LINES):
            line = file.readline()
            if not line:
                break
            if line.startswith(_TYPED_START):
                found = _typed(line)
                if found is not None:
                    typed = found
                    break
        messages = _message_count(file, stat.st_size)
        stopped = _stopped(_last_entries(file, stat.st_size))
    return SessionInfo(
        id=session_id(path),
        path=path,
        created=_created(header, path, stat),
        modified=datetime.fromtimestamp(stat.st_mtime).astimezone(),
        first_prompt=_one_line(typed),
        messages=messages,
        bytes=stat.st_size,
        cwd=str(header.get("cwd", "")),
        model=str(header.get("model", "")),
        stopped=stopped,
    )


def _last_entries(file, size: int) -> builtins.list[dict]:
    """The last entry of the file that is not undo bookkeeping, if it is within its last few KiB."""
    file.seek(max(0, size - _ERROR_TAIL_BYTES))
    lines = file.read().split(b"\n")[1:]  # the first piece may be the end of a longer line
    for line in reversed(lines):
        entry = _loads(line) if line.strip() else None
        if entry is not None and entry.get("type") == REWIND:
            return []  # what came before it may be a branch the conversation left (a turn ended by an error)
        if entry is not None and entry.get("type") not in _BOOKKEEPING:
            return [entry]
    return []


def _stopped(last: builtins.list[dict]) -> str:
    if last and last[0].get("type") == "turn_error":
        return str(last[0].get("kind") or "error")
    return ""


def _typed(line: bytes) -> str | None:
    """The typed words of a user-turn line, decoding only that string (the context blocks after it can be large)."""
    try:
        value, _ = json.JSONDecoder().raw_decode(line.decode("utf-8", "replace"), len(_TYPED_START))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _message_count(file, size: int) -> int:
    file.seek(max(0, size - _TAIL_BYTES))
    match = _TAIL_COUNT.search(file.read())
    if match:
        return int(match.group(1))
    # A damaged or header-only file: count the whole message lines (an entry is one line, so the pattern only
    # matches at a line's start; the text after the last newline is a cut line or nothing).
    file.seek(0)
    data = file.read()
    return data[: data.rfind(b"\n")].count(_MESSAGE_LINE)


def _loads(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _created(header: dict, path: Path, stat: os.stat_result) -> datetime:
    try:
        return datetime.fromisoformat(header["created"])
    except (KeyError, TypeError, ValueError):
        pass
    try:
        return datetime.strptime(path.name[:15], "%Y%m%d-%H%M%S").astimezone()
    except ValueError:
        return datetime.fromtimestamp(stat.st_mtime).astimezone()


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= PROMPT_CHARS else line[: PROMPT_CHARS - 1] + "…"
