"""Files written through options and operands of build, archive and conversion tools: `gcc -o`, `base64 -o`,
`split`, `patch`, `tar -x -C`, `unzip -d`, `git -C` and the like (tee, cp, sed -i, curl -o... are in writes.py).

Each target is judged like a redirection: outside the workspace or protected is destructive, inside ordinary.
"""

from __future__ import annotations

from mini_agent.safety.shell import argv, git
from mini_agent.safety.shell.words import Word

# Options that name the file (or folder) a tool writes, per tool.
OUTPUT_OPTIONS = {
    "base64": {"-o", "--output"},
    "base32": {"-o", "--output"},
    "gcc": {"-o"},
    "cc": {"-o"},
    "g++": {"-o"},
    "c++": {"-o"},
    "clang": {"-o"},
    "clang++": {"-o"},
    "ld": {"-o", "--output"},
    "as": {"-o"},
    "rustc": {"-o", "--out-dir"},
    "javac": {"-d"},
    "pandoc": {"-o", "--output"},
    "openssl": {"-out"},
    "ssh-keygen": {"-f"},
    "csplit": {"-f", "--prefix"},
    "patch": {"-o", "--output", "-d", "--directory"},
    "unzip": {"-d"},
    "gzip": set(),
    "uglifyjs": {"-o", "--output"},
    "esbuild": {"--outfile", "--outdir"},
    "tsc": {"--outDir", "--outFile"},
    "go": {"-o"},
    "cargo": {"--target-dir"},
    "convert": set(),
    "magick": set(),
    "ffmpeg": set(),
    "sqlite3": set(),
    "xxd": set(),
    "split": set(),
    "tar": {"-C", "--directory"},
    "7z": set(),
}
# Options that take a value, so that the value is not mistaken for an operand.
OTHER_VALUES = {
    "openssl": {"-in", "-inkey", "-key", "-passin", "-passout", "-config"},
    "ssh-keygen": {"-t", "-b", "-C", "-N", "-P", "-Z", "-m"},
    "split": {"-l", "-b", "-C", "-n", "-a", "--additional-suffix", "-t"},
    "tar": {"-f", "--file", "-T", "--files-from", "-X", "--exclude-from", "--exclude"},
    "patch": {"-p", "-i", "--input", "-F", "-B", "-r", "-z"},
    "xxd": {"-c", "-g", "-l", "-s", "-o", "-n"},
    "ffmpeg": {"-i", "-f", "-c", "-codec", "-vf", "-af", "-ss", "-t", "-b", "-r", "-s", "-map", "-preset", "-crf"},
}
EXTRACT = {"-x", "--extract", "--get"}


def targets(name: str, arguments: tuple[Word, ...]) -> list[Word]:
    """The files and folders this command writes through its options or operands."""
    if name == "git":
        return _git(arguments)
    if name not in OUTPUT_OPTIONS:
        return []
    options = OUTPUT_OPTIONS[name]
    args = argv.parse(arguments, options | OTHER_VALUES.get(name, set()))
    found = args.value(*options) if options else []
    operands = list(args.operands)
    if name == "tar":
        first = (arguments[0].value or "") if arguments else ""
        extracts = args.has(*EXTRACT) or (not first.startswith("-") and "x" in first)
        creates = args.has("-c", "--create") or (not first.startswith("-") and "c" in first)
        archive = args.value("-f", "--file")
        if not archive and first and not first.startswith("-") and "f" in first and len(arguments) > 1:
            archive = [arguments[1]]
        return (found or [Word(".", ".")] if extracts else []) + (archive if creates else [])
    if name in ("xxd", "split", "sqlite3") and len(operands) > 1:
        found += operands[1:2] if name != "sqlite3" else operands[:1]
    elif name in ("convert", "magick", "ffmpeg") and len(operands) > 1:
        found += operands[-1:]
    elif name == "patch" and operands and not found:
        found += operands[:1]
    elif name == "7z" and operands and operands[0].value in ("x", "e"):
        found += [Word(w.text, w.value[2:]) for w in arguments if (w.value or "").startswith("-o")] or [Word(".", ".")]
    elif name == "7z" and operands and operands[0].value in ("a", "u", "d") and len(operands) > 1:
        found += operands[1:2]
    elif name == "unzip" and not found:
        found.append(Word(".", "."))
    return found


def _git(arguments: tuple[Word, ...]) -> list[Word]:
    """`git -C dir commit ...` changes the repository in dir: the folder counts as written unless git only reads."""
    directories: list[Word] = []
    for before, word in zip(arguments, arguments[1:], strict=False):
        if before.value == "-C":
            directories.append(word)
    if not directories:
        return []
    call = git.invocation(arguments)
    sub = call.subcommand.value if call.subcommand is not None else None
    return [] if sub in git.SIMPLE_READS else directories
