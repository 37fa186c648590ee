"""The session's known secrets: which values must never leave unseen, finding them in any encoding, masking them.

One SecretSet per session (Settings.secret_set), shared by the agent (masking tool output and events), the gate
(asking before a secret goes out), the tools (read_file adds what it reads from credential files) and the session
file. It starts with the API key and the values of secret-looking environment variables, reads the project's own
`.env*` files on first use and again when they change (bash can read them too: `source .env; curl ...$VAR`), and
grows with what the agent reads. Thread-safe: read-only tools run in parallel.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mini_agent.safety import harvest
from mini_agent.safety.encodings import SPACES, SpaceMap, dump_spans, fold, folds, literals, strip_spaces

MASK = "****"
HARVEST_BYTES = 1024 * 1024
"""Credential files are small; a huge file named like one is read only this far."""
_WORDS = re.compile(r"[^ \t\n\r\f\v]+")
_CUT = re.compile(r"\[\.\.\. [\d,]+ characters omitted \.\.\.\]")
MIN_EDGE = 6
"""The shortest piece of a secret cut by truncation that is still masked."""
_TEMPLATES = (".env.example", ".env.sample", ".env.template", ".env.dist", ".env.defaults")


@dataclass(frozen=True)
class Secret:
    value: str
    label: str
    """What it is, for a human: `OPENAI_API_KEY`, `FOO_TOKEN from .env`, `a password in ~/.netrc`."""

    @property
    def hint(self) -> str:
        """A recognisable sliver of a long value (`sk-…Xy`); nothing of a short one."""
        return f"{self.value[:3]}…{self.value[-2:]}" if len(self.value) >= 20 else f"{len(self.value)} characters"

    def described(self) -> str:
        return f"the value of {self.label} ({self.hint})"


@dataclass(frozen=True)
class Hit:
    secret: Secret
    encoding: str
    start: int
    end: int


@dataclass(frozen=True)
class _Entry:
    literal: str
    """Folded (see encodings.fold), like the text it is searched in."""
    secret: Secret
    encoding: str
    spaced: bool
    """The literal holds spaces, so it is searched in the text as it is, not in the text without spaces."""


class SecretSet:
    def __init__(self, secrets: Iterable[tuple[str, str]] = (), project: Path | None = None, minimum: int = 8):
        """`secrets` are (value, label) pairs always masked when at least 4 characters long (the API key);
        `project` is the directory whose `.env*` files are read on first use and whenever they change."""
        self._lock = threading.RLock()
        self._secrets: dict[str, Secret] = {}
        self._entries: tuple[_Entry, ...] = ()
        self._needles: tuple[tuple[bytes, Secret], ...] = ()
        self._shortest = 0
        """The shortest literal searched for: a shorter text (most streamed deltas) cannot hold a secret."""
        self._project = project
        self._stamps: dict[str, tuple[int, int, int]] = {}
        self.minimum = minimum
        for value, label in secrets:
            self.add(value, label, minimum=4)

    # ---- what is known --------------------------------------------------------------------------------------

    def add(self, value: str, label: str, minimum: int | None = None) -> bool:
        """Know one more value; False when it was known already or is too short to be a secret."""
        if len(value) < (self.minimum if minimum is None else minimum) or value == MASK:
            return False
        with self._lock:
            if value in self._secrets:
                return False
            secret = Secret(value, label)
            self._secrets[value] = secret
            forms: dict[str, str] = {}
            for form, name in literals(value).items():
                for folded in sorted(folds(form)):
                    forms.setdefault(folded, name)
            added = [_Entry(form, secret, name, any(char in SPACES for char in form)) for form, name in forms.items()]
            # Longest first, so a secret containing another is masked whole and named by the longer one.
            self._entries = tuple(sorted((*self._entries, *added), key=lambda entry: -len(entry.literal)))
            self._shortest = len(self._entries[-1].literal)
            self._needles = (*self._needles, (value.encode("utf-8", "surrogatepass"), secret))
        return True

    def harvest(self, path: Path, shown: str | None = None) -> int:
        """Add the secret values of a credential file; how many were new. Unreadable files add nothing."""
        if not Path(path).is_file():  # a directory, or a pipe that would block the read
            return 0
        try:
            with open(path, "rb") as file:
                text = file.read(HARVEST_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return 0
        return sum(self.add(value, label) for label, value in harvest.values_in(shown or Path(path).name, text))

    def refresh(self) -> None:
        """Read the project's `.env*` files that appeared or changed since the last look (a stat each)."""
        if self._project is None:
            return
        try:
            entries = [entry for entry in os.scandir(self._project) if _dotenv_name(entry.name)]
        except OSError:
            return
        for entry in entries:
            try:
                stat = entry.stat()
            except OSError:
                continue
            stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
            with self._lock:
                if self._stamps.get(entry.name) == stamp:
                    continue
                self._stamps[entry.name] = stamp
            if entry.is_file():
                self.harvest(Path(entry.path), entry.name)

    def __iter__(self) -> Iterator[Secret]:
        return iter(tuple(self._secrets.values()))

    def __len__(self) -> int:
        return len(self._secrets)

    def values(self) -> list[str]:
        return list(self._secrets)

    def named(self, name: str) -> Secret | None:
        """The secret a variable name holds, by its label (`FOO_TOKEN`, `FOO_TOKEN from .env`)."""
        for secret in self:
            if secret.label == name or secret.label.startswith(f"{name} from "):
                return secret
        return None

    # ---- finding and masking --------------------------------------------------------------------------------

    def find(self, text: str) -> list[Hit]:
        """Every place a known secret appears in the text, in any of its encodings (overlaps possible)."""
        entries = self._entries
        if not entries or (len(text) < self._shortest and "characters omitted" not in text):
            return []  # shorter than any literal (most streamed deltas), and no cut half of one either
        hits: list[Hit] = []
        original, text = text, fold(text)  # literals are folded too: letter case never hides a secret
        stripped = strip_spaces(text)
        spaces: SpaceMap | None = None
        for entry in entries:
            haystack = text if entry.spaced else stripped
            start = haystack.find(entry.literal)
            while start != -1:
                end = start + len(entry.literal)
                if entry.spaced or len(stripped) == len(text):
                    span = (start, end)
                else:
                    spaces = spaces or SpaceMap(text)
                    span = spaces.span(start, end)
                hits.append(Hit(entry.secret, entry.encoding, *span))
                start = haystack.find(entry.literal, end)
        needles = self._needles
        for index, start, end in dump_spans(original, [needle for needle, _ in needles]):
            hits.append(Hit(needles[index][1], "hex dump", start, end))
        if "characters omitted" in text:
            hits += _cut_edges(text, entries)
        return hits

    def mask(self, text: str) -> str:
        """The text with every encoding of every known secret replaced by `****` (line breaks kept)."""
        hits = self.find(text)
        if not hits:
            return text
        pieces, position = [], 0
        for start, end in _merged((hit.start, hit.end) for hit in hits):
            pieces += [text[position:start], _WORDS.sub(MASK, text[start:end])]
            position = end
        pieces.append(text[position:])
        return "".join(pieces)

    def mask_output(self, text: str, source: str) -> str:
        """A tool's output masked, after learning the passwords in its URLs (`git remote -v` printing
        `https://me:TOKEN@host`): each one that could be a secret joins the known ones, so sending it later asks;
        every other URL password (`me:password@`) is masked where it stands."""
        if "@" not in text or "://" not in text:
            return self.mask(text)
        for _, _, value, secret in harvest.userinfo(text):
            if secret:
                self.add(value, f"a password in a URL ({source})")
        masked = self.mask(text)
        pieces, position = [], 0
        for start, end, _, _ in harvest.userinfo(masked):
            pieces += [masked[position:start], MASK]
            position = end
        return "".join(pieces) + masked[position:] if pieces else masked

    def mask_event(self, event: object) -> object:
        """An event (a frozen dataclass) with the text, tool inputs and tool results in it masked."""
        if not dataclasses.is_dataclass(event) or isinstance(event, type):
            return event
        changes = {}
        for field in dataclasses.fields(event):
            value = getattr(event, field.name)
            if dataclasses.is_dataclass(value) and isinstance(getattr(value, "content", None), str):
                masked = self.mask(value.content)  # a ToolResult
                if masked != value.content:
                    changes[field.name] = dataclasses.replace(value, content=masked)
            elif (masked := self.mask_value(value)) is not value:
                changes[field.name] = masked
        return dataclasses.replace(event, **changes) if changes else event

    def mask_value(self, value: object) -> object:
        """Strings inside dicts, lists and tuples masked; the same object back when nothing changed."""
        if isinstance(value, str):
            masked = self.mask(value)
            return value if masked == value else masked
        if isinstance(value, dict):
            masked = {self.mask_value(key): self.mask_value(item) for key, item in value.items()}
            unchanged = len(masked) == len(value) and all(key in value and masked[key] is value[key] for key in masked)
            return value if unchanged else masked
        if isinstance(value, list | tuple):
            items = [self.mask_value(item) for item in value]
            return value if all(new is old for new, old in zip(items, value, strict=True)) else type(value)(items)
        return value


def _cut_edges(text: str, entries: tuple[_Entry, ...]) -> list[Hit]:
    """The halves of a secret that output truncation cut in two (`[... N characters omitted ...]`): the start
    of one just before the cut, the end of one just after it."""
    hits = []
    for cut in _CUT.finditer(text):
        before = cut.start()
        while before and text[before - 1] in SPACES:
            before -= 1
        after = cut.end()
        while after < len(text) and text[after] in SPACES:
            after += 1
        for entry in entries:
            literal = entry.literal
            for size in range(len(literal) - 1, MIN_EDGE - 1, -1):
                if text.endswith(literal[:size], 0, before):
                    hits.append(Hit(entry.secret, entry.encoding, before - size, before))
                    break
            for size in range(len(literal) - 1, MIN_EDGE - 1, -1):
                if text.startswith(literal[-size:], after):
                    hits.append(Hit(entry.secret, entry.encoding, after, after + size))
                    break
    return hits


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _dotenv_name(name: str) -> bool:
    return name not in _TEMPLATES and (name == ".env" or fnmatch.fnmatchcase(name, ".env.*"))
