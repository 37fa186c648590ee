"""Path operands judged against the workspace: broad targets, block devices, writes outside, likely secrets."""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from mini_agent.safety.credential_places import HOME_ROOTS, SECRET_NAMES
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary, worst
from mini_agent.safety.shell.words import Word
from mini_agent.safety.workspace import HARMLESS_DEVICES, Workspace, secret_reason

# Top-level directories whose removal breaks the machine or the user's account.
SYSTEM_ROOTS = (
    "/usr", "/etc", "/home", "/var", "/boot", "/opt", "/root", "/srv", "/lib", "/lib32", "/lib64", "/bin",
    "/sbin", "/dev", "/proc", "/sys", "/mnt", "/media", "/run", "/snap", "/tmp", "/Users", "/System",
    "/Library", "/Applications", "/private",
)  # fmt: skip
BLOCK_DEVICE = re.compile(r"/dev/(sd|nvme|hd|vd|xvd|mmcblk|disk|loop|md|dm-|sr|mapper/|(mem|kmem|port)$)")
HARMLESS_FD = re.compile(r"/(dev|proc/self)/fd/\d+")
# Typical names of files that hold secrets, for telling whether a glob would reach one.
SECRET_SAMPLES = list(dict.fromkeys([
    ".env", ".env.local", ".envrc", "id_rsa", "id_ed25519", "server.pem", "server.key", "credentials",
    "credentials.json", ".npmrc", ".pypirc", ".netrc", ".pgpass", ".git-credentials", "secrets.yaml",
    "prod.tfvars", "service-account.json", "cert.p12", "app.keystore",
    *sorted(HOME_ROOTS), *(name for name in SECRET_NAMES if not any(char in name for char in "*?[")),
]))  # fmt: skip
WILDCARD_ONLY = re.compile(r"(\.|\*|\?|\[[^\]]*\])*\*(\.|\*|\?|\[[^\]]*\])*")


VIEWS_LIMIT = 4
"""Most directories tracked as the shell's possible current directory; beyond it, it counts as unknown."""


@dataclass(frozen=True)
class Place:
    """Where relative paths start. After `cd dir` the shell may be in `dir`, or still where it was (the cd
    may have failed, or run in a subshell), so paths are judged from every directory it may be in. After a
    `cd` to a computed place the directory is unknown and relative paths cannot be checked."""

    workspace: Workspace
    """The workspace, its `cwd` the most likely current directory."""
    elsewhere: tuple[Path, ...] = ()
    """Other directories the shell may be in."""
    cwd_known: bool = True
    written: frozenset[Path] = frozenset()
    """Files that earlier parts of the command write (resolved): running one runs code not yet visible."""
    ran_before: bool = False
    """Other parts of the command run before the one being judged (a script missing now may be made by them)."""

    def known(self, word: Word) -> bool:
        """Whether the path a word names can be worked out before running."""
        value = word.value
        return value is not None and _expand_user(value) is not None and (self.cwd_known or _absolute(value))

    def views(self, word: Word) -> list[Workspace]:
        """The workspace seen from each directory the shell may be in (one view for an absolute path)."""
        if not self.elsewhere or _absolute(word.value or "/"):
            return [self.workspace]
        return [self.workspace, *(replace(self.workspace, cwd=other) for other in self.elsewhere)]

    def moved(self, target: Word | None) -> Place:
        """The place after `cd target` (None: `cd` alone, which goes home)."""
        if target is not None and (not self.known(target) or target.value == "-"):
            return self.lost()
        destinations = [
            view.home if target is None else _resolve(view, target.value or "")
            for view in self.views(target or Word("~", "~"))
        ]
        current = [view.cwd or view.root for view in self.views(Word(".", "."))]
        others = tuple(dict.fromkeys(path for path in [*destinations[1:], *current] if path != destinations[0]))
        if len(others) >= VIEWS_LIMIT:
            return self.lost()
        return replace(self, workspace=replace(self.workspace, cwd=destinations[0]), elsewhere=others)

    def lost(self) -> Place:
        return replace(self, cwd_known=False)

    def wrote(self, words: list[Word]) -> Place:
        """The place after a command writes these files."""
        paths = {self.views(word)[0].resolve(word.value or "") for word in words[:64] if self.known(word)}
        return replace(self, written=self.written | paths) if paths else self

    def linked(self, link: Path, target: Path) -> Place:
        """The place after a command creates `link` pointing at `target`: later paths through it follow it."""
        return replace(self, workspace=self.workspace.linked(link, target))


def _absolute(value: str) -> bool:
    return value.startswith(("/", "~"))


def _expand_user(value: str) -> str | None:
    """`~name/x` as the shell expands it (another user's home); None for a user this machine does not know."""
    if not value.startswith("~") or value == "~" or value.startswith("~/"):
        return value
    expanded = os.path.expanduser(value)
    return None if expanded.startswith("~") else expanded


def _resolve(view: Workspace, value: str) -> Path:
    return view.resolve(_expand_user(value) or value)


def _entry(value: str, view: Workspace) -> Path:
    """The directory entry a path names: a final symlink is not followed (`rm link` removes the link)."""
    head, slash, name = value.rpartition("/")
    if name in ("", ".", "..") or (value.startswith("~") and not slash):
        return _resolve(view, value)
    return _resolve(view, head or ("/" if slash else ".")) / name


@functools.cache
def _system_roots() -> frozenset[Path]:
    roots = {Path("/")} | {Path(root) for root in SYSTEM_ROOTS}
    return frozenset(roots | {Path(os.path.realpath(root)) for root in SYSTEM_ROOTS})


def broad(word: Word, place: Place) -> bool:
    """Whether deleting (or moving away) this target would take far more than a project's files: `/`, `~`,
    a system root, home or a folder directly in it, the workspace itself or a parent, `.`, `*` in the
    current directory, or the contents of any of those (`~/*`). Unknown targets count as broad."""
    if not place.known(word):
        return True
    value = word.value or ""
    stripped = value.rstrip("/") or "/"
    head, slash, last = stripped.rpartition("/")
    if WILDCARD_ONLY.fullmatch(last):
        if not slash:
            return True
        stripped = head or "/"
    return any(_broad(_resolve(view, stripped), view) for view in place.views(word))


def _broad(path: Path, view: Workspace) -> bool:
    cwd = view.cwd or view.root
    return (
        path in _system_roots()
        or path == view.home
        or path.parent == view.home
        or path == view.root
        or path in view.root.parents
        or path == cwd
        or path in cwd.parents
    )


def write_verdict(word: Word, place: Place, verb: str = "writes", entry: bool = False) -> Verdict | None:
    """What writing (or with verb "deletes", removing) this path means; None when it is harmless."""
    value = word.value
    if value in HARMLESS_DEVICES or (value is not None and HARMLESS_FD.fullmatch(value)):
        return None
    if word.stream:  # `tee >(gzip > x)`: a pipe to a command that is checked on its own
        return None
    if word.produced:  # `> $(...)`: a command picks the file, which is how a write outside gets hidden
        return destructive(f"{verb} a path that a command computes at run time ({word.text})")
    if value is None:
        return ordinary(f"{verb} a path computed at run time ({word.text})")
    if _glob_reaches_git(value):  # even unmarked: the grammar does not see every glob (`.[g]it`)
        return destructive(f"{verb} {value}, a pattern that matches .git (the repository's internals)")
    if not place.known(word):
        protected = place.workspace.protected(Path(value))  # `.git/...` is protected from any directory
        if protected:
            return destructive(f"{verb} {value}, which is protected: {protected}")
        return ordinary(f"{verb} {value} in a directory only known at run time")
    found = [_write_verdict(value, view, verb, entry) for view in place.views(word)]
    return worst(verdict for verdict in found if verdict is not None)


def _write_verdict(value: str, view: Workspace, verb: str, entry: bool) -> Verdict | None:
    path = _entry(value, view) if entry else _resolve(view, value)
    if BLOCK_DEVICE.match(value) or BLOCK_DEVICE.match(str(path)):
        return destructive(f"{verb} the block device {value}")
    protected = view.protected(path)
    if protected:
        return destructive(f"{verb} {view.shown(path)}, which is protected: {protected}")
    if str(path) in HARMLESS_DEVICES:
        return None
    if not view.inside(path):
        return destructive(f"{verb} outside the working directory: {view.shown(path)}")
    return ordinary(f"{verb} {view.shown(path)}")


def _glob_reaches_git(value: str) -> bool:
    """Whether a glob would match a `.git` on the way (`.g*/objects`, `.[g]it`, `.*`); a bare `*` skips dot files."""
    for part in value.split("/"):
        if any(char in part for char in "*?[") and part[:1] in (".", "[") and fnmatch.fnmatchcase(".git", part):
            return True
    return False


def secret_verdict(word: Word, place: Place) -> Verdict | None:
    """Reading a file that likely holds a secret needs a human's yes: its contents would reach the model.
    A directory of keys (`~/.ssh`) counts, and so does a glob that would match a secret's name (`.en*`)."""
    value = word.value
    if value is None:
        return None
    candidates: list[str | Path] = [value, value.rstrip("/") + "/x"]
    if place.known(word):
        resolved = _resolve(place.views(word)[0], value)
        candidates += [resolved, resolved / "x"]
    if any(secret_reason(candidate) for candidate in candidates) or (word.glob and _glob_matches_secret(value)):
        return ordinary(f"reads a likely secret ({value})")
    return None


def _glob_matches_secret(value: str) -> bool:
    """Whether a glob with some literal text in its name (`.en*`, `*.pem`, `id_*`) would match a secret's name.
    A bare `*` is not counted: reading every file is like `grep -r`, which the read-only list allows."""
    name = value.rstrip("/").rpartition("/")[2]
    if not re.sub(r"[*?]|\[[^\]]*\]", "", name).strip("."):
        return False
    samples = SECRET_SAMPLES if name.startswith(".") else [s for s in SECRET_SAMPLES if not s.startswith(".")]
    return any(fnmatch.fnmatchcase(sample, name) for sample in samples)
