"""Commands that destroy data or stop the machine: deletions of broad targets, disk tools, mass kills, shutdown."""

from __future__ import annotations

import re

from mini_agent.safety.shell import argv
from mini_agent.safety.shell.paths import BLOCK_DEVICE, Place, broad, write_verdict
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary
from mini_agent.safety.shell.words import Word

DISK_TOOLS = {
    "mkswap": "mkswap erases the device it formats",
    "wipefs": "wipefs erases file-system signatures",
    "shred": "shred overwrites file contents beyond recovery",
    "blkdiscard": "blkdiscard discards every block of a device",
    "fdisk": "fdisk changes disk partitions",
    "sfdisk": "sfdisk changes disk partitions",
    "cfdisk": "cfdisk changes disk partitions",
    "parted": "parted changes disk partitions",
    "gdisk": "gdisk changes disk partitions",
    "sgdisk": "sgdisk changes disk partitions",
    "killall5": "killall5 signals every process",
    "sudo": "runs as another user (sudo)",
    "doas": "runs as another user (doas)",
    "pkexec": "runs as another user (pkexec)",
    "runuser": "runs as another user (runuser)",
    "su": "runs as another user (su)",
    "shutdown": "shuts down or restarts the machine",
    "reboot": "shuts down or restarts the machine",
    "halt": "shuts down or restarts the machine",
    "poweroff": "shuts down or restarts the machine",
}
PARTITION_LISTING = {"-l", "--list", "-s", "--show-size"}
POWER_ACTIONS = {"poweroff", "reboot", "halt", "kexec", "rescue", "emergency"}
MATCH_ALL = {"", ".", ".*", ".+", "^", "$", "^.*"}
CHMOD_OPTIONS = re.compile(r"-[cfvR]+|--.*")


def verdicts(name: str, arguments: tuple[Word, ...], place: Place) -> list[Verdict]:
    """What makes this command destructive (or, for deletions, ordinary with what it deletes)."""
    if name == "rm":
        return _rm(arguments, place)
    if name in ("rmdir", "unlink"):
        return [v for word in arguments if not _option(word) and (v := _deletes(word, place)) is not None]
    if name == "dd":
        return _dd(arguments)
    if name.startswith("mkfs") or name == "mke2fs":
        return [destructive(f"{name} creates a new file system, erasing the device")]
    if name in DISK_TOOLS:
        values = {word.value for word in arguments}
        if name in ("fdisk", "sfdisk", "parted") and values & PARTITION_LISTING:
            return [ordinary(f"{name} -l lists partitions")]
        return [destructive(DISK_TOOLS[name])]
    if name in ("chmod", "chown", "chgrp"):
        return _ownership(name, arguments, place)
    if name == "kill":
        return _kill(arguments)
    if name in ("init", "telinit") and any(word.value in ("0", "6") for word in arguments):
        return [destructive("shuts down or restarts the machine")]
    if name == "systemctl" and any(word.value in POWER_ACTIONS for word in arguments):
        return [destructive("systemctl shuts down, restarts or isolates the machine")]
    if name in ("pkill", "killall") and _matches_every_process(arguments):
        return [destructive(f"{name} with a pattern that matches every process")]
    if name == "crontab" and any(word.value == "-r" for word in arguments):
        return [destructive("crontab -r deletes every scheduled job")]
    if name == "crontab" and not {word.value for word in arguments} & {"-l", "-e"}:
        return [destructive("crontab installs scheduled jobs, which later run unchecked")]
    return []


def _option(word: Word) -> bool:
    return word.value is not None and word.value.startswith("-") and word.value != "-"


def _deletes(word: Word, place: Place) -> Verdict | None:
    return write_verdict(word, place, "deletes", entry=True)


def _rm(arguments: tuple[Word, ...], place: Place) -> list[Verdict]:
    args = argv.parse(arguments)
    found: list[Verdict] = []
    if args.has("--no-preserve-root"):
        found.append(destructive("rm --no-preserve-root can delete the whole file system"))
    recursive = args.has("-r", "-R", "--recursive")
    how = "recursive" if recursive else "forced"
    narrow: list[str] = []
    for target in args.operands:
        if recursive or args.has("-f", "--force"):
            if not place.known(target):
                found.append(destructive(f"{how} deletion of a path only known at run time ({target.text})"))
                continue
            if broad(target, place):
                found.append(destructive(f"{how} deletion of a broad target ({target.shown})"))
                continue
        verdict = _deletes(target, place)
        if verdict is not None and verdict.kind == "ordinary" and verdict.reason.startswith("deletes "):
            narrow.append(verdict.reason.removeprefix("deletes "))
        elif verdict is not None:
            found.append(verdict)
    if narrow:  # one sentence for the ordinary ones: "deletes build, dist"
        more = f" and {len(narrow) - 3} more" if len(narrow) > 3 else ""
        found.append(ordinary("deletes " + ", ".join(narrow[:3]) + more))
    return found


def _dd(arguments: tuple[Word, ...]) -> list[Verdict]:
    for word in arguments:
        if word.value is None:
            return [destructive(f"dd with an operand computed at run time ({word.text})")]
        if word.value.startswith("of="):
            target = word.value[3:]
            if target == "/dev/null":
                return []
            if BLOCK_DEVICE.match(target):
                return [destructive(f"dd writes to the block device {target}")]
            return [destructive(f"dd overwrites {target} in place")]
    return []


def _ownership(name: str, arguments: tuple[Word, ...], place: Place) -> list[Verdict]:
    if name == "chmod":  # `chmod -w file`: a mode may start with a dash, so only c, f, v, R count as options
        options = [word.value or "" for word in arguments if word.value and CHMOD_OPTIONS.fullmatch(word.value)]
        operands = [word for word in arguments if not (word.value and CHMOD_OPTIONS.fullmatch(word.value))]
        recursive = any("R" in option and not option.startswith("--") or option == "--recursive" for option in options)
        reference = any(option.startswith("--reference") for option in options)
    else:
        args = argv.parse(arguments)
        operands, recursive = list(args.operands), args.has("-R", "--recursive")
        reference = args.has("--reference")
    targets = operands if reference else operands[1:]
    verb = {"chmod": "changes permissions of", "chown": "changes the owner of", "chgrp": "changes the group of"}
    found: list[Verdict] = []
    for target in targets:
        if recursive and (target.value is None or broad(target, place)):
            found.append(destructive(f"recursive {name} of a broad target ({target.shown})"))
            continue
        verdict = write_verdict(target, place, verb[name])
        if verdict is not None:
            found.append(verdict)
    return found


def _matches_every_process(arguments: tuple[Word, ...]) -> bool:
    args = argv.parse(arguments, {"-u", "-U", "-g", "-G", "-P", "-s", "-t", "--signal", "-o", "-y"})
    return any(word.value in MATCH_ALL for word in args.operands) or (args.has("-u") and not args.operands)


def _kill(arguments: tuple[Word, ...]) -> list[Verdict]:
    rest = list(arguments)
    if rest and rest[0].value in ("-s", "-n"):
        rest = rest[2:]
    elif rest and rest[0].value and rest[0].value.startswith("-") and rest[0].value != "--":
        rest = rest[1:]
    if rest and rest[0].value == "--":
        rest = rest[1:]
    if any(word.value == "-1" for word in rest):
        return [destructive("kill -1 signals every process the user can reach")]
    return []
