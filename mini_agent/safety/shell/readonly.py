"""The read-only allowlist: commands that only look, with the arguments that would make them write or run code.

A command here runs in every mode without asking, so each entry names what its options can do. Commands
with no option that writes or runs anything tolerate arguments computed at run time; the others do not,
because `sort $ARGS` may turn out to be `sort -o file`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mini_agent.safety.shell import argv, sed
from mini_agent.safety.shell.argv import Args
from mini_agent.safety.shell.paths import Place, secret_verdict
from mini_agent.safety.shell.verdict import Verdict, ordinary, read_only
from mini_agent.safety.shell.words import Word
from mini_agent.safety.workspace import HARMLESS_DEVICES

Check = Callable[[Args], "str | None"]


@dataclass(frozen=True)
class Spec:
    check: Check | None = None
    """Why these arguments are not read-only, or None when they are."""
    takes_value: frozenset[str] = frozenset()
    reads_files: bool = False
    """Operands are files whose contents are shown: a likely secret among them, or a file named only at run
    time, needs a human's yes. (Counts and hashes such as wc and sha256sum reveal nothing.)"""
    safe_options: bool = True
    """No option writes or runs anything, so arguments computed at run time are harmless."""
    pattern_first: bool = False
    """The first operand is a pattern or filter, not a file (unless -e / -f gives the pattern)."""


def _uniq(args: Args) -> str | None:
    return "uniq writes its second file operand" if len(args.operands) > 1 else None


def _sort(args: Args) -> str | None:
    if args.has("-o", "--output"):
        return "sort -o writes a file"
    return "sort --compress-program runs a program" if args.has("--compress-program") else None


def _date(args: Args) -> str | None:
    if args.has("-s", "--set") or any(not (word.value or "").startswith("+") for word in args.operands):
        return "date with an operand or --set sets the clock"
    return None


HOSTNAME_DISPLAY = {"-s", "-f", "-d", "-i", "-I", "-a", "-A", "-y", "--short", "--fqdn", "--long", "--domain"}
HOSTNAME_DISPLAY |= {"--ip-address", "--all-ip-addresses", "--all-fqdns", "--alias", "--nis", "--yp"}


def _hostname(args: Args) -> str | None:
    if args.operands or any(flag not in HOSTNAME_DISPLAY for flag in args.flags):
        return "hostname with an operand or a setting option changes the host name"
    return None


def _tree(args: Args) -> str | None:
    return "tree -o / -R writes files" if args.has("-o", "-R") else None


def _file(args: Args) -> str | None:
    return "file -C writes a compiled magic file" if args.has("-C", "--compile") else None


def _rg(args: Args) -> str | None:
    if args.has("--pre", "--hostname-bin", "-z", "--search-zip"):
        return "rg --pre / --search-zip / --hostname-bin runs other programs"
    return None


def _tee(args: Args) -> str | None:
    writes = [word for word in args.operands if word.value not in HARMLESS_DEVICES and not word.stream]
    return "tee writes files" if writes else None


def _command(args: Args) -> str | None:
    return None if args.has("-v", "-V") else "command runs another command"


def _sed(args: Args) -> str | None:
    if args.has("-i", "--in-place", "-I"):
        return "sed -i edits files in place"
    if args.has("-f", "--file"):
        return "sed -f runs a script from a file"
    if not args.has("-n", "--quiet", "--silent"):
        return "sed without -n is not on the read-only list"
    scripts = args.value("-e", "--expression") or list(args.operands[:1])
    if not scripts or any(word.value is None or not sed.effects(word.value).only_prints for word in scripts):
        return "the sed script may write files or run commands (w, W, e, or s///w, s///e)"
    return None


def _simple(names: str, **fields) -> dict[str, Spec]:
    return {name: Spec(**fields) for name in names.split()}


PATTERN_VALUES = frozenset({"-e", "--regexp", "-f", "--file", "-m", "--max-count", "-A", "-B", "-C"})
READ_ONLY: dict[str, Spec] = {
    **_simple(
        "ls pwd echo printf true false test [ [[ (( : cd pushd popd dirs which type stat du df realpath readlink "
        "basename dirname seq whoami id uname ps uptime nproc free tr sleep expr groups arch tty printenv env "
        "export declare local readonly typeset unset logname exec read mapfile readarray let shift wait jobs getopts"
    ),
    **_simple("wc md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum sum"),
    **_simple(
        "cat head tail nl od hexdump strings tac rev fold cut paste column diff comm cmp base64", reads_files=True
    ),
    **_simple("grep egrep fgrep jq", takes_value=PATTERN_VALUES, reads_files=True, pattern_first=True),
    "uniq": Spec(_uniq, frozenset({"-f", "-s", "-w"}), reads_files=True, safe_options=False),
    "sort": Spec(_sort, frozenset({"-k", "-t", "-o", "-S", "-T", "--output"}), reads_files=True, safe_options=False),
    "date": Spec(_date, frozenset({"-d", "--date", "-f", "--file", "-r", "--reference"}), safe_options=False),
    "hostname": Spec(_hostname, safe_options=False),
    "tree": Spec(_tree, frozenset({"-L", "-P", "-I", "-o", "-H", "-T"}), safe_options=False),
    "file": Spec(_file, frozenset({"-m", "-f", "-F", "-e", "-P"}), safe_options=False),
    "rg": Spec(_rg, PATTERN_VALUES | {"-g", "-t", "-T"}, reads_files=True, safe_options=False, pattern_first=True),
    "sed": Spec(_sed, frozenset({"-e", "--expression", "-f", "--file", "-l"}), reads_files=True, safe_options=False),
    "command": Spec(_command),
    "tee": Spec(_tee),
}


NOT_LISTED = "not on the read-only list"


def verdict(name: str, arguments: tuple[Word, ...], place: Place) -> Verdict:
    """Read-only when the command is on the list and its arguments keep it so; ordinary with the reason if not."""
    spec = READ_ONLY.get(name)
    if spec is None:
        return ordinary(NOT_LISTED)
    args = argv.parse(arguments, spec.takes_value)
    if args.dynamic and not spec.safe_options:
        return ordinary(f"an argument is computed at run time, so {name}'s options cannot be checked")
    problem = spec.check(args) if spec.check is not None else None
    if problem:
        return ordinary(problem)
    if spec.reads_files:
        operands = args.operands
        if spec.pattern_first and not args.value("-e", "--regexp", "-f", "--file"):
            operands = operands[1:]
        for word in operands:
            if word.value is None and not word.stream:
                return ordinary(f"reads a file named at run time ({word.text}), which may hold secrets")
            secret = secret_verdict(word, place)
            if secret is not None:
                return secret
    return read_only(f"read-only: {name}")
