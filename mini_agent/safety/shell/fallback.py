"""A safety net for text the parser cannot read: the destructive shapes, looked for word by word.

Only used when tree-sitter reports errors (or the input is too long or too deep to parse), so that an
unparseable `rm -rf /` is still destructive. Quotes, backslashes and brace lists are flattened first:
`r''m`, `\\rm` and `{rm,-rf,/}` all read as rm. Every check is linear in the text's length, so a
megabyte of garbage costs milliseconds.
"""

from __future__ import annotations

import re

from mini_agent.safety.shell.find import DELETERS
from mini_agent.safety.shell.find import RUNS as FIND_RUNS

_FLATTEN = re.compile(r"""['"\\{}]""")
_SEGMENT = re.compile(r"[;&|\n()`]|\$\(")
_FORCE = re.compile(r"-[a-zA-Z]*[rRf][a-zA-Z]*|--recursive|--force|--no-preserve-root")
_BLOCK_WRITE = re.compile(r">\s*/dev/(sd|nvme|hd|vd|xvd|mmcblk|disk|mapper)")
_PIPE_TO_SHELL = re.compile(
    r"\|\s*(sudo\s+|env\s+)?([\w./-]*/)?(ba|z|da|k|mk|fi)?sh\b|\bsh\s+<\s*\(|\bsource\s+<\(|\.\s+<\("
)
_FUNCTION_BODY = re.compile(r"\(\s*\)\s*\{")
_NAME_BEFORE = re.compile(r"([\w:.-]+)\s*$")
DISK = {"mke2fs", "mkswap", "wipefs", "shred", "fdisk", "sfdisk", "parted", "gdisk", "sgdisk", "blkdiscard"}
POWER = {"shutdown", "reboot", "halt", "poweroff", "killall5"}
OTHER_USER = {"sudo", "doas", "pkexec", "runuser", "su"}
INTERPRETERS = ("python", "perl", "ruby", "node", "php")


def destructive_shape(text: str) -> str | None:
    """The first destructive shape found in the raw text, or None."""
    flat = _FLATTEN.sub("", text).replace(",", " ").replace("\x00", "\n")
    if _BLOCK_WRITE.search(flat):
        return "writes to a block device"
    if _PIPE_TO_SHELL.search(flat):
        return "runs text as a shell script"
    if _fork_bomb(flat):
        return "fork bomb"
    for segment in _SEGMENT.split(flat):
        reason = _segment_shape(segment.split())
        if reason:
            return reason
    stages = [stage.split() for stage in flat.split("|")]
    for before, after in zip(stages, stages[1:], strict=False):
        if {"base64", "base32", "xxd", "curl", "wget"} & set(before) and after and after[0].startswith(INTERPRETERS):
            return "runs downloaded or decoded code"
    return None


def _segment_shape(words: list[str]) -> str | None:
    names = {word.rsplit("/", 1)[-1] for word in words}
    if "rm" in names and any(_FORCE.fullmatch(word) for word in words):
        return "recursive or forced deletion"
    if "find" in names and ("-delete" in words or (names & FIND_RUNS and names & DELETERS)):
        return "recursive deletion through find"
    if names & DISK or any(name.startswith("mkfs") for name in names):
        return "erases disks or files"
    if "dd" in names and any(word.startswith("of=") for word in words):
        return "dd writing to a file or device"
    if names & {"chmod", "chown", "chgrp"} and any(word in ("-R", "--recursive") for word in words):
        return "recursive permission or owner change"
    if "kill" in names and "-1" in words:
        return "kills every process"
    if names & POWER or (names & {"init", "telinit"} and names & {"0", "6"}):
        return "shuts down or restarts the machine"
    if names & OTHER_USER:
        return "runs as another user"
    if names & {"eval", "exec"}:
        return "runs code built at run time"
    if "git" in names:
        return _git_shape(words)
    return None


def _git_shape(words: list[str]) -> str | None:
    present = set(words)
    if "push" in present and (present & {"-f", "--force", "--mirror", "--delete"} or any(w[:1] == "+" for w in words)):
        return "force-push rewrites remote history"
    if present & {"rebase", "filter-branch", "filter-repo", "--amend"} or {"reset", "--hard"} <= present:
        return "rewrites history"
    if "clean" in present and any(re.fullmatch(r"-[a-zA-Z]*f[a-zA-Z]*|--force", word) for word in words):
        return "deletes untracked files"
    if present & {"checkout", "restore"} and present & {".", ":/", "*"}:
        return "discards uncommitted changes"
    return None


def _fork_bomb(text: str) -> bool:
    """A function (`name() {`) whose body calls itself in a pipe or in the background."""
    for match in list(_FUNCTION_BODY.finditer(text))[:20]:
        name = _NAME_BEFORE.search(text[max(0, match.start() - 100) : match.start()])
        if name is None:
            continue
        escaped = re.escape(name[1])
        if re.search(rf"{escaped}\s*\|\s*{escaped}|{escaped}\s*&", text[match.end() : match.end() + 1000]):
            return True
    return False
