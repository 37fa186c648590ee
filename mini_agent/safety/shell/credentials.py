"""Credentials a command would read: files outside the project that hold keys or passwords, and trees that
hold secret files.

Reading `~/.ssh/id_rsa`, `~/.aws/credentials` or another project's `.env` sends a key to the model whatever
command does it (`cat`, `grep`, `base64`, `cp` into the project...), so any path argument naming one is
destructive: it asks in auto mode too. The project's own `.env` stays ordinary (its values are guarded on the
way out). Recursive readers (`grep -r`, `rg`, `tar c`, ...) over a tree holding secret files are not read-only;
the tree is walked with a cap on entries, and a tree too big to walk counts as holding one.
"""

from __future__ import annotations

import os
from pathlib import Path

from mini_agent.safety.credential_places import HOME_ROOTS, PLACES
from mini_agent.safety.shell import argv
from mini_agent.safety.shell.paths import Place
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary
from mini_agent.safety.shell.words import Word
from mini_agent.safety.workspace import secret_reason, within

# Commands that use a path's name (or metadata) but never show its contents.
NAME_ONLY = set(
    "echo printf ls test [ [[ stat realpath readlink basename dirname du df cd pushd popd which type mkdir rm "
    "rmdir chmod chown chgrp touch ln unlink wc md5sum sha1sum sha256sum sha512sum cksum b2sum file".split()
)
HOME_SECRET_NAMES = HOME_ROOTS
"""First names under home that are credentials themselves (`.ssh`, `.netrc`), not folders that merely hold some."""
WALK_LIMIT = 5_000
"""Most directory entries looked at to tell whether a tree holds a secret file."""
RECURSIVE_GREPS = {"grep", "egrep", "fgrep"}
SEARCHERS = {"rg", "ag", "ack", "rgrep"}
GREP_VALUE_FLAGS = {"-e", "--regexp", "-f", "--file", "-m", "-A", "-B", "-C", "--include"}
SEARCHER_VALUE_FLAGS = {"-e", "--regexp", "-f", "--file", "-g", "--glob", "-t", "--type", "-m"}
HIDDEN_FLAGS = {"--hidden", "-u", "--unrestricted", "-uu", "-uuu", "-.", "--no-ignore"}


def outside(word: Word, place: Place) -> Verdict | None:
    """Destructive when the word names credentials outside the project (or a folder that holds them)."""
    value = word.value
    if not value or len(value) > 4096 or not place.known(word):
        return None
    for view in place.views(word):
        path = view.resolve(value)
        if within(path, view.root):
            continue
        if view.secret(path):
            return destructive(f"reads credentials outside the project ({view.shown(path)})")
    return None


def verdicts(name: str, arguments: tuple[Word, ...], place: Place) -> list[Verdict]:
    """Credentials outside the project named by any argument; trees of secrets read by recursive readers."""
    if name in NAME_ONLY:
        return []
    found: list[Verdict] = []
    pattern = _search_pattern(name, arguments)
    for word in arguments[:200]:
        if word is pattern:
            continue
        candidates = [word]
        if word.value and "=" in word.value and word.value.startswith("-"):
            attached = word.value.partition("=")[2]
            candidates.append(Word(attached, attached))
        if word.value and word.value.startswith("@"):  # curl -d @file
            candidates.append(Word(word.value[1:], word.value[1:]))
        if word.value and word.value.startswith("file://"):  # curl file:///home/me/.ssh/id_rsa
            candidates.append(Word(word.value[7:], word.value[7:]))
        for candidate in candidates:
            if (verdict := outside(candidate, place)) is not None:
                return [verdict]
    for tree in _trees(name, arguments):
        verdict = tree_verdict(tree, place, hidden=name not in SEARCHERS or _shows_hidden(arguments))
        if verdict is not None:
            found.append(verdict)
            break
    return found


def _search_pattern(name: str, arguments: tuple[Word, ...]) -> Word | None:
    """The operand a grep or searcher reads as its pattern, not as a file (`grep '\\.env' .gitignore`): none when
    the pattern comes from -e or -f, whose values are still checked like every other word."""
    if name not in RECURSIVE_GREPS and name not in SEARCHERS:
        return None
    args = argv.parse(arguments, GREP_VALUE_FLAGS if name in RECURSIVE_GREPS else SEARCHER_VALUE_FLAGS)
    if args.value("-e", "--regexp", "-f", "--file") or args.has("--files") or not args.operands:
        return None
    return args.operands[0]


def _shows_hidden(arguments: tuple[Word, ...]) -> bool:
    return any(word.value in HIDDEN_FLAGS or (word.value or "").startswith("-uu") for word in arguments)


def _trees(name: str, arguments: tuple[Word, ...]) -> list[Word]:
    """The directories a recursive reader walks."""
    if name in RECURSIVE_GREPS or name == "rgrep":
        args = argv.parse(arguments, GREP_VALUE_FLAGS)
        if name != "rgrep" and not args.has("-r", "-R", "--recursive", "--dereference-recursive"):
            return []
        operands = list(args.operands if args.value("-e", "--regexp", "-f", "--file") else args.operands[1:])
        return operands or [Word(".", ".")]
    if name in SEARCHERS:
        args = argv.parse(arguments, SEARCHER_VALUE_FLAGS)
        operands = list(
            args.operands if args.value("-e", "--regexp", "-f", "--file") or args.has("--files") else args.operands[1:]
        )
        return operands or [Word(".", ".")]
    if name == "tar":
        first = (arguments[0].value or "") if arguments else ""
        args = argv.parse(arguments, {"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude"})
        creates = args.has("-c", "--create") or (not first.startswith("-") and "c" in first)
        operands = [w for w in args.operands if w is not arguments[0] or first.startswith("-")]
        directory = args.value("-C", "--directory")
        if directory and directory[0].value is not None:  # operands are relative to -C
            base = directory[0].value.rstrip("/")
            operands = [
                w if (w.value or "/").startswith(("/", "~")) else Word(w.text, f"{base}/{w.value}") for w in operands
            ]
        return [*directory, *operands] if creates else []
    if name in ("zip", "cp", "scp", "rsync") and any(
        w.value in ("-r", "-R", "-a", "--recursive", "--archive") for w in arguments
    ):
        return [word for word in arguments if not (word.value or "-").startswith("-")]
    return []


def tree_verdict(tree: Word, place: Place, hidden: bool = True) -> Verdict | None:
    """Whether a tree a command reads whole holds secret files (destructive outside the project)."""
    if not place.known(tree):
        return ordinary(f"reads a tree named at run time ({tree.text}), which may hold secrets")
    view = place.views(tree)[0]
    root = view.resolve(tree.value or ".")
    inside = within(root, view.root)
    if root == Path("/"):
        return destructive("reads the whole file system, keys and credentials included")
    if not inside and view.secret(root):
        return destructive(f"reads credentials outside the project ({view.shown(root)})")
    held = [view.home / place for place in PLACES] + list(view.private)
    if not inside and any(within(place, root) and place.exists() for place in held):
        return destructive(f"reads credentials outside the project (under {view.shown(root)})")
    for link, target in view.links:  # made earlier in this command, so not on disk yet
        if within(link, root) and not within(target, view.root) and view.secret(target):
            return destructive(
                f"reads credentials outside the project ({view.shown(target)}, through {view.shown(link)})"
            )
    secret = _walk(root, hidden)
    if secret is None:
        return None
    if secret == "":
        return ordinary(f"reads a tree too big to check for secret files ({tree.shown})")
    if within(Path(secret), view.root):
        return ordinary(f"reads a tree that holds likely secrets ({view.shown(Path(secret))})")
    return destructive(f"reads credentials outside the project ({view.shown(Path(secret))})")


def _walk(root: Path, hidden: bool) -> str | None:
    """The first secret file under root, "" when the walk hit its cap, None when there is none."""
    if not root.is_dir():
        return str(root) if root.is_file() and secret_reason(root) else None
    pending, seen = [root], 0
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    seen += 1
                    if seen > WALK_LIMIT:
                        return ""
                    if entry.name == ".git" or (not hidden and entry.name.startswith(".")):
                        continue
                    if entry.is_symlink():  # `grep -R` and tar -h follow links: one to ~/.ssh is a way out
                        target = Path(os.path.realpath(entry.path))
                        if secret_reason(target) or any(part in HOME_SECRET_NAMES for part in target.parts):
                            return str(target)
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif secret_reason(entry.name):
                        return entry.path
        except OSError:
            continue
    return None
