"""git: which subcommands only read, which destroy work or history, and configuration that runs commands.

`git -c core.pager='...' log` runs the pager value as shell code, so such values are returned as scripts to
check like any other command line.
"""

from __future__ import annotations

from dataclasses import dataclass

from mini_agent.safety.shell import argv
from mini_agent.safety.shell.argv import Args
from mini_agent.safety.shell.paths import Place, secret_verdict, write_verdict
from mini_agent.safety.shell.verdict import Verdict, destructive, ordinary, read_only
from mini_agent.safety.shell.words import Word

GLOBAL_WITH_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix"}
SIMPLE_READS = {
    "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "cat-file", "blame", "describe",
    "shortlog", "grep", "merge-base", "name-rev", "rev-list", "for-each-ref", "show-ref", "count-objects",
    "check-ignore", "check-attr", "whatchanged", "range-diff", "cherry", "diff-tree", "diff-files", "diff-index",
    "show-branch", "annotate", "version",
}  # fmt: skip
SHOWS_CONTENT = {"show", "diff", "cat-file", "blame", "grep", "log", "whatchanged", "annotate"}
# `-o` means --others for ls-files and --only-matching for grep; elsewhere it would name an output file.
DASH_O_IS_SAFE = {"ls-files", "grep"}
BROAD_PATHSPECS = {".", "./", ":/", ":/.", "*", "./*", ":(top)", ":/*", ":(top)."}
EXPIRES = {"gc", "repack", "prune", "maintenance", "reflog", "worktree"}
"""Subcommands whose expiry settings (`-c gc.pruneExpire=now`) decide how much history they delete."""
LIST_VALUES = {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"}
# Options that take the next word as their value, per subcommand: elsewhere a value would look like an operand,
# which only ever makes the check stricter.
VALUE_OPTIONS = {
    "branch": LIST_VALUES | {"-u", "--set-upstream-to"},
    "tag": LIST_VALUES | {"-m", "-F", "-u", "--message", "--file"},
    "for-each-ref": LIST_VALUES,
    "commit": {"-m", "-F", "-C", "-c", "--message", "--file", "--author", "--date"},
    "push": {"--repo", "-o", "--push-option", "--receive-pack", "--exec"},
    "grep": {"-e", "-f"},
    "log": {"-n", "--max-count", "--author", "--grep", "--since", "--until"},
}


@dataclass(frozen=True)
class Invocation:
    subcommand: Word | None
    arguments: tuple[Word, ...]
    configs: tuple[Word, ...]
    """`-c key=value` settings, as given."""
    from_environment: tuple[str, ...]
    """Keys set by `--config-env=key=VAR`: their values only exist at run time."""
    exec_path: bool


def invocation(arguments: tuple[Word, ...]) -> Invocation:
    configs: list[Word] = []
    from_environment: list[str] = []
    exec_path = False
    index = 0
    while index < len(arguments):
        word = arguments[index]
        text = word.value
        if text is None or not text.startswith("-"):
            return Invocation(word, arguments[index + 1 :], tuple(configs), tuple(from_environment), exec_path)
        name, equals, attached = text.partition("=")
        exec_path = exec_path or name == "--exec-path"
        if name in GLOBAL_WITH_VALUE and not equals and index + 1 < len(arguments):
            index += 1
            attached = arguments[index].value or ""
        if name == "-c":
            configs.append(arguments[index] if not equals else Word(word.text, attached))
        elif name == "--config-env":
            from_environment.append(attached.partition("=")[0])
        index += 1
    return Invocation(None, (), tuple(configs), tuple(from_environment), exec_path)


def verdicts(arguments: tuple[Word, ...], place: Place) -> list[Verdict]:
    git = invocation(arguments)
    if git.subcommand is None:
        return [read_only("read-only: git without a subcommand")]
    sub = git.subcommand.value
    if sub is None:
        return [destructive("the git subcommand is computed at run time, so it cannot be checked")]
    args = argv.parse(git.arguments, VALUE_OPTIONS.get(sub, set()) | {"--output"})
    found = _destructive(sub, args)
    if sub in EXPIRES and (git.configs or git.from_environment):
        found.append(destructive(f"git -c can make git {sub} expire history now (gc.pruneExpire, gc.reflogExpire)"))
    found += [v for word in args.value("--output") if (v := write_verdict(word, place)) is not None]
    if sub == "config":
        files = argv.parse(git.arguments, {"-f", "--file"}).value("-f", "--file")
        found += [v for word in files if (v := write_verdict(word, place)) is not None]
    if git.configs or git.from_environment:
        found.append(ordinary("git -c changes git's configuration for this command"))
    if git.exec_path:
        found.append(ordinary("git --exec-path runs git programs from another directory"))
    found.append(_read_only(sub, args, place))
    return found


def _destructive(sub: str, args: Args) -> list[Verdict]:
    if sub == "push":
        if args.has("-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror"):
            return [destructive("force-push rewrites remote history")]
        if args.has("-d", "--delete", "--prune") or any((w.value or "").startswith(":") for w in args.operands[1:]):
            return [destructive("git push deletes remote branches")]
        if any((word.value or "").startswith("+") for word in args.operands):
            return [destructive("force-push (+refspec) rewrites remote history")]
    elif sub == "reset" and args.has("--hard"):
        return [destructive("git reset --hard discards uncommitted work")]
    elif sub == "clean" and args.has("-f", "--force") and not args.has("-n", "--dry-run"):
        return [destructive("git clean -f deletes untracked files")]
    elif sub in ("checkout", "switch") and args.has("-f", "--force", "--discard-changes"):
        return [destructive(f"git {sub} --force discards local changes")]
    elif sub == "checkout" and _broad_pathspec(args):
        return [destructive("git checkout of all or many paths discards uncommitted changes")]
    elif (
        sub == "restore" and _broad_pathspec(args) and (args.has("-W", "--worktree") or not args.has("-S", "--staged"))
    ):
        return [destructive("git restore of all or many paths discards uncommitted changes")]
    elif sub == "rm" and _broad_pathspec(args) and not args.has("--cached", "-n", "--dry-run"):
        return [destructive("git rm of all or many paths deletes the files from the working tree")]
    elif sub in ("rebase", "filter-branch", "filter-repo"):
        return [destructive(f"git {sub} rewrites history")]
    elif sub == "commit" and args.has("--amend"):
        return [destructive("git commit --amend rewrites the last commit")]
    elif sub == "branch" and (args.has("-D") or args.has("-d", "--delete") and args.has("-f", "--force")):
        return [destructive("git branch -D deletes a branch even if its commits are not merged")]
    elif sub == "stash" and _first(args) in ("drop", "clear"):
        return [destructive("git stash drop/clear deletes stashed changes")]
    elif sub == "reflog" and _first(args) in ("expire", "delete"):
        return [destructive("git reflog expire/delete removes the way back to lost commits")]
    elif sub == "update-ref" and args.has("-d"):
        return [destructive("git update-ref -d deletes a ref")]
    elif sub == "tag" and args.has("-d", "--delete"):
        return [destructive("git tag -d deletes a tag, which keeps no reflog")]
    elif sub == "branch" and args.has("-M", "-C"):
        return [destructive(f"git branch {'-M' if args.has('-M') else '-C'} overwrites a branch of that name")]
    elif sub == "gc" and any((w.value or "") != "never" for w in args.value("--prune")):
        return [destructive("git gc --prune=<date> deletes unreachable commits for good")]
    elif sub == "repack" and args.has("-d") and args.has("-a") and not args.has("-A"):
        return [destructive("git repack -a -d drops unreachable commits for good")]
    elif sub == "prune" and not args.has("-n", "--dry-run"):
        return [destructive("git prune deletes unreachable commits for good")]
    return []


def _broad_pathspec(args: Args) -> bool:
    """Every path, or a glob over many (`'*.py'`): changes there cannot be told apart from one file's."""
    return any(word.value in BROAD_PATHSPECS or "*" in (word.value or "") for word in args.operands)


def _first(args: Args) -> str | None:
    return args.operands[0].value if args.operands else None


def _read_only(sub: str, args: Args, place: Place) -> Verdict:
    if args.dynamic:
        return ordinary(f"an argument is computed at run time, so git {sub}'s options cannot be checked")
    if args.has("--output", "--ext-diff", "-O", "--open-files-in-pager") or (
        sub not in DASH_O_IS_SAFE and args.has("-o")
    ):
        return ordinary(f"git {sub} with an output file or an external program")
    problem = _listing_problem(sub, args)
    if problem:
        return ordinary(problem)
    if sub in SHOWS_CONTENT:
        for word in args.operands:
            secret = secret_verdict(word, place)
            if secret is not None:
                return secret
    return read_only(f"read-only: git {sub} without writing flags")


def _listing_problem(sub: str, args: Args) -> str | None:
    first = _first(args)
    if sub in SIMPLE_READS:
        return None
    if sub == "branch":
        if args.has(*"-d -D -m -M -c -C -f -u -t".split(), "--delete", "--move", "--copy", "--force", "--track") or (
            args.has("--set-upstream-to", "--unset-upstream", "--edit-description", "--create-reflog", "--no-track")
        ):
            return "git branch changes branches"
        return "git branch with a name creates a branch" if args.operands and not args.has("-l", "--list") else None
    if sub == "tag":
        if args.has(*"-d -a -s -f -m -F -u -e".split(), "--delete", "--annotate", "--sign", "--force", "--message"):
            return "git tag changes tags"
        return "git tag with a name creates a tag" if args.operands and not args.has("-l", "--list") else None
    if sub == "remote":
        return None if first in (None, "show", "get-url") else f"git remote {first} changes remotes"
    if sub == "config":
        reads = args.has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l") or first in (
            "get",
            "list",
        )
        writes = args.has("-e", "--edit", "--add", "--unset", "--unset-all", "--replace-all", "--rename-section")
        return None if reads and not writes and not args.has("--remove-section") else "git config changes settings"
    if sub == "stash":
        return None if first in ("list", "show") else "git stash changes the working tree"
    if sub == "reflog":
        return None if first in (None, "show", "exists") else "git reflog changes the reflog"
    if sub == "worktree":
        return None if first == "list" else "git worktree changes worktrees"
    return "not on the read-only list"
