"""The files a command writes or moves, besides its redirections: tee, cp, mv, ln, install, touch, mkdir,
truncate, sed -i (and sed w), sort -o, uniq's output operand, curl -o, wget -O, tree -o, rsync."""

from __future__ import annotations

import re

from mini_agent.safety.shell import argv, sed
from mini_agent.safety.shell.commands import Redirect
from mini_agent.safety.shell.paths import Place, broad, secret_verdict, write_verdict
from mini_agent.safety.shell.verdict import Verdict, destructive
from mini_agent.safety.shell.words import Word

# Options taking a value, per command, so that the value is not mistaken for a path.
VALUES = {
    "tee": set(),
    "cp": {"-t", "--target-directory", "-S", "--suffix"},
    "mv": {"-t", "--target-directory", "-S", "--suffix"},
    "ln": {"-t", "--target-directory", "-S", "--suffix"},
    "install": {"-t", "--target-directory", "-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"},
    "touch": {"-r", "--reference", "-d", "--date", "-t"},
    "mkdir": {"-m", "--mode"},
    "truncate": {"-r", "--reference", "-s", "--size"},
    "sed": {"-e", "--expression", "-f", "--file", "-l"},
    "sort": {"-k", "-t", "-o", "--output", "-S", "-T"},
    "uniq": {"-f", "-s", "-w"},
    "curl": {"-o", "--output", "-d", "--data", "-H", "--header", "-X", "-u", "-A", "-e", "-b", "-c", "-T"},
    "wget": {"-O", "--output-document", "-o", "--output-file", "-P"},
    "tree": {"-o", "-L", "-P", "-I"},
    "rsync": set(
        "-e --rsh -f --filter --exclude --include --exclude-from --include-from --files-from --backup-dir "
        "--suffix --chmod --log-file --port --password-file --partial-dir -T --temp-dir --compare-dest "
        "--copy-dest --link-dest -M --remote-option --out-format --max-size --min-size --rsync-path --chown".split()
    ),
}
REMOTE = re.compile(r"[^/]*:|rsync://")
OUTPUT_REDIRECTS = {">", ">>", "&>", "&>>", ">|", "<>"}


def verdicts(name: str, arguments: tuple[Word, ...], place: Place) -> list[Verdict]:
    if name not in VALUES:
        return []
    args = argv.parse(arguments, VALUES[name])
    found: list[Verdict] = []
    if name == "rsync" and args.has("--delete", "--delete-before", "--delete-after", "--delete-during"):
        found += [
            destructive(f"rsync --delete onto a broad target ({w.shown})")
            for w in _targets(name, args)
            if broad(w, place)
        ]
    if name == "mv":
        for source in _sources(args):
            if broad(source, place):
                found.append(destructive(f"moves a broad target away ({source.shown})"))
            elif (moved := write_verdict(source, place, "moves", entry=True)) is not None:
                found.append(moved)
    return found + [v for target in _targets(name, args) if (v := write_verdict(target, place)) is not None]


def targets(name: str, arguments: tuple[Word, ...], redirects: tuple[Redirect, ...]) -> list[Word]:
    """The files this command writes, as far as they are known: its output redirections and write operands."""
    found = [r.target for r in redirects if r.target is not None and r.operator in OUTPUT_REDIRECTS]
    return found + (_targets(name, argv.parse(arguments, VALUES[name])) if name in VALUES else [])


def _targets(name: str, args: argv.Args) -> list[Word]:
    operands = list(args.operands)
    if name in ("tee", "touch", "mkdir", "truncate"):
        return operands
    if name in ("cp", "mv", "ln", "install"):
        if args.value("-t", "--target-directory"):
            return args.value("-t", "--target-directory")
        if name == "install" and args.has("-d", "--directory"):
            return operands
        return operands[-1:] if len(operands) > 1 or name == "ln" else []
    if name == "sed":
        scripts = args.value("-e", "--expression") or operands[:1]
        named = [Word(path, path) for w in scripts if w.value for path in sed.effects(w.value).writes]
        if not args.has("-i", "--in-place"):
            return named
        return named + (operands if args.value("-e", "--expression", "-f", "--file") else operands[1:])
    if name == "uniq":
        return operands[1:2]
    if name in ("sort", "tree"):
        return args.value("-o", "--output")
    if name == "curl":
        return args.value("-o", "--output")
    if name == "rsync":
        return [w for w in operands[-1:] if len(operands) > 1 and not REMOTE.match(w.value or "")]
    if name == "wget":
        return args.value("-O", "--output-document", "-o", "--output-file")
    return []


def _sources(args: argv.Args) -> list[Word]:
    if args.value("-t", "--target-directory"):
        return list(args.operands)
    return list(args.operands[:-1])


def redirect_verdicts(redirects: tuple[Redirect, ...], place: Place) -> list[Verdict]:
    """Output redirections write their file; input from a likely secret reads it."""
    found: list[Verdict] = []
    for redirect in redirects:
        target = redirect.target
        if target is None:
            continue
        writes = redirect.operator in OUTPUT_REDIRECTS or (
            redirect.operator == ">&" and (target.value is None or not (target.value.isdigit() or target.value == "-"))
        )
        if writes and (verdict := write_verdict(target, place)) is not None:
            found.append(verdict)
        elif redirect.operator == "<" and (secret := secret_verdict(target, place)) is not None:
            found.append(secret)
    return found
