"""Classify a shell command line: every simple command it would run, each read-only, ordinary or destructive.

The command is parsed with the real grammar; each simple command is judged by the rules (wrappers unwrapped,
code in strings parsed again as its own script), and the whole takes the kind of its worst part. Nothing
here prompts, writes or touches the network; resolving paths reads the file system.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mini_agent.safety.shell import (
    credentials,
    destructive,
    escapes,
    find,
    git,
    gitconfig,
    inline,
    interpreters,
    links,
    optioncode,
    outputs,
    readonly,
    runtime,
    scripts,
    services,
    syntax,
    writes,
    written_files,
)
from mini_agent.safety.shell.commands import Command
from mini_agent.safety.shell.fallback import destructive_shape
from mini_agent.safety.shell.findings import Findings
from mini_agent.safety.shell.paths import Place, write_verdict
from mini_agent.safety.shell.verdict import Kind, Verdict, ordinary, read_only, worst
from mini_agent.safety.shell.words import Word
from mini_agent.safety.shell.wrappers import command_name, unwrap
from mini_agent.safety.workspace import Workspace

LENGTH_LIMIT = 100_000
"""Longest command parsed; longer input is never read-only and only gets the safety net."""
WORDS_LIMIT = 1_000
"""Most words judged in one simple command (each path operand costs a file-system lookup)."""
NESTING_LIMIT = 5
"""Deepest `bash -c` / `eval` / `sh <<EOF` nesting checked; deeper code is treated as destructive."""


@dataclass(frozen=True)
class Part:
    """One simple command of the line, judged on its own."""

    text: str
    """The command as it runs: words unquoted, joined by single spaces, wrappers included."""
    kind: Kind
    reason: str
    forms: tuple[str, ...]
    """`text` and the commands inside its wrappers (`npm test` for `timeout 5 npm test`, the code of
    `bash -c '...'`): permission rules match any of these."""
    written: str = ""
    """The command as the model wrote it, quotes kept: what a human is shown (`git commit -m "a b"`)."""


@dataclass(frozen=True)
class Classification:
    kind: Kind
    """The worst kind among the parts: destructive > ordinary > read-only."""
    reason: str
    """The reason of the first part of that kind."""
    parts: tuple[Part, ...]
    """Every simple command found, nested ones (in `$(...)`, `bash -c`, `find -exec`, ...) as parts of their own."""
    parsed: bool
    """False when the grammar reported errors or missing pieces: such a command is never read-only."""


def classify(command: str, workspace: Workspace) -> Classification:
    """How risky a shell command line is, part by part. Never raises."""
    try:
        return _classify(command, workspace)
    except Exception as error:  # noqa: BLE001  the permission check needs an answer for any input
        return _unchecked(command, f"could not be checked ({type(error).__name__})")


def _classify(command: str, workspace: Workspace) -> Classification:
    if not command.strip():
        return Classification("ordinary", "empty command", (), True)
    if len(command) > LENGTH_LIMIT:
        return _unchecked(command, f"too long to check ({len(command):,} characters)")
    if "\x00" in command:  # bash cannot receive a NUL byte; what runs instead is anyone's guess
        return _unchecked(command, "contains a NUL byte")
    checker = _Checker(Place(workspace))
    whole = checker.script(command, depth=0, stdin=None)
    if runtime.LOOKALIKES.search(command):  # the grammar may split where bash does not (a CR between words)
        odd = worst(runtime.lookalikes((Word(command, command),)))
        if odd is not None:
            checker.parts.append(Part(command.strip(), odd.kind, odd.reason, (command.strip(),)))
    parts = tuple(checker.parts)
    # A parse failure comes first among equals: "could not be fully parsed" says more than any one part.
    verdict = worst([*whole, *(Verdict(part.kind, part.reason) for part in parts)])
    verdict = verdict or read_only("nothing to run")
    return Classification(verdict.kind, verdict.reason, parts, checker.parsed)


def _unchecked(command: str, reason: str) -> Classification:
    shape = destructive_shape(command[: LENGTH_LIMIT * 10])
    if shape:
        return Classification("destructive", f"{reason}, and it looks destructive: {shape}", (), False)
    return Classification("ordinary", reason, (), False)


def render(words: tuple[Word, ...] | list[Word]) -> str:
    return " ".join(word.shown for word in words)


class _Checker:
    """Walks the commands of a script (and the scripts inside them), collecting one Part per command."""

    def __init__(self, place: Place):
        self.place = place
        self.parts: list[Part] = []
        self.parsed = True
        self.code_seen = False
        self.git_aliases: dict[str, str | None] = {}
        """git aliases defined earlier on this command line: `git config alias.c clean && git c -fdx`."""
        """A variable set earlier on this command line holds code (`x='$(...)'`), for `eval` and `bash -c` too."""

    def script(self, source: str, depth: int, stdin: tuple[Command, ...] | None) -> list[Verdict]:
        """Check every command of a script; return what applies to the script as a whole."""
        if depth > NESTING_LIMIT:
            return [Verdict("destructive", "nested too deeply to check")]
        parsed = syntax.parse(source, stdin)
        for command in parsed.commands:
            self.command(command, parsed.functions, depth)
        if parsed.parsed:
            return []
        self.parsed = False
        shape = destructive_shape(source)
        if shape:
            return [Verdict("destructive", f"could not be fully parsed, and it looks destructive: {shape}")]
        return [ordinary("could not be fully parsed")]

    def command(self, command: Command, functions: frozenset[str], depth: int, words: tuple[Word, ...] = ()) -> None:
        """Judge one simple command; `words` replaces its words for the rules (find's `{}` filled in)."""
        words = words or command.words
        found = Findings([])
        found.settings(command.assignments, bare=not command.words or command.declaration)
        safe_settings = not found.verdicts
        found.verdicts += writes.redirect_verdicts(command.redirects, self.place)
        found.verdicts += escapes.redirect_verdicts(command.redirects)
        found.verdicts += [
            verdict
            for redirect in command.redirects
            if redirect.operator in ("<", "<>") and redirect.target is not None
            if (verdict := credentials.outside(redirect.target, self.place)) is not None
        ]
        if command.assignments and safe_settings and command.words and not command.declaration:
            found.forms.append(_text(replace(command, assignments=())))  # `LC_ALL=C sort x` is also `sort x`
        name: str | None = None
        if command.declaration:
            found.verdicts.append(read_only(f"read-only: {render(words[:1])} sets shell variables"))
        elif words:
            name = self._words(words, command, functions, depth, found)
        self.code_seen = self.code_seen or command.code_in_variables or runtime.carries_code(command)
        found.verdicts += runtime.evaluation_verdicts(command, name or render(words[:1]), words[1:], self.code_seen)
        for script in [*found.code, *found.hidden]:
            if script.value is None:
                found.verdicts.append(Verdict("destructive", f"runs code built at run time ({script.text})"))
                continue
            if script in found.code:  # interpreter strings are checked, but are no form for permission rules
                found.forms.append(script.value.strip())
            found.verdicts += self.script(script.value, depth + 1, command.upstream if command.piped else None)
        verdict = worst(found.verdicts) or read_only("only sets variables" if command.assignments else "only redirects")
        text = _text(command)
        forms = tuple(dict.fromkeys([text, *found.forms]))
        self.parts.append(Part(text, verdict.kind, verdict.reason, forms, _text(command, quoted=True)))
        self.place = replace(self.place.wrote(writes.targets("", (), command.redirects)), ran_before=True)
        if name in ("cd", "pushd", "popd"):  # even in a pipeline or subshell: the views keep the old directory
            self._move(name, words)

    def _words(
        self, words: tuple[Word, ...], command: Command, functions: frozenset[str], depth: int, found: Findings
    ) -> str | None:
        """Judge the command its words name, inside any wrappers; return that command's name."""
        unwrapped = unwrap(words)
        found.forms += [render(layer) for layer in unwrapped.layers]
        found.verdicts += unwrapped.verdicts
        found.settings(unwrapped.assignments, bare=False)
        inner = unwrapped.command + ((Word("read from stdin by xargs", None),) if unwrapped.stdin_operands else ())
        if unwrapped.stdin_operands and find.fed_to_deletion(inner, command.upstream):
            found.verdicts.append(Verdict("destructive", "recursive deletion: find's matches are piped to a deletion"))
        name = command_name(inner[0]) if inner and not inner[0].glob else None
        if len(inner) > WORDS_LIMIT:
            shape = destructive_shape(render(inner))
            found.verdicts.append(
                Verdict("destructive", f"looks destructive: {shape}")
                if shape
                else ordinary(f"too many words to check ({len(inner):,})")
            )
        elif name is None:
            found.verdicts.append(
                Verdict("destructive", "the command's name is computed at run time, so it cannot be checked")
            )
        else:
            found.verdicts += runtime.verdicts(inner, name)
            found.verdicts += self._rules(name, inner, command, functions, found, depth)
        return name

    def _rules(
        self,
        name: str,
        inner: tuple[Word, ...],
        command: Command,
        functions: frozenset[str],
        found: Findings,
        depth: int,
    ) -> list[Verdict]:
        place, arguments = self.place, inner[1:]
        code, hidden = found.code, found.hidden
        verdicts: list[Verdict] = []
        if command.function == name and (command.in_pipeline or command.background):
            verdicts.append(Verdict("destructive", f"fork bomb: {name} starts copies of itself without end"))
        runs = scripts.runs(name, arguments, command) or inline.code(name, arguments)
        if runs is not None:
            verdicts += runs.verdicts
            code += runs.scripts
        hidden += optioncode.scripts(name, arguments)
        for seen in (
            interpreters.inline(name, arguments, place),
            written_files.runs(inner[0], name, arguments, place, command.redirects),
        ):
            if seen is not None:
                verdicts += seen.verdicts
                hidden += seen.shell
        verdicts += destructive.verdicts(name, arguments, place)
        verdicts += escapes.verdicts(name, arguments, place)
        verdicts += credentials.verdicts(name, arguments, place)
        verdicts += services.verdicts(name, arguments)
        verdicts += writes.verdicts(name, arguments, place)
        produced = outputs.targets(name, arguments)
        verdicts += [verdict for target in produced if (verdict := write_verdict(target, place)) is not None]
        if name == "git":
            verdicts += git.verdicts(arguments, place)
            code += gitconfig.scripts(arguments) + gitconfig.repository_scripts(place, arguments)
            verdicts += gitconfig.hooks(gitconfig.invocation(arguments))
            self.git_aliases |= gitconfig.defined_aliases(arguments)
            alias = gitconfig.alias_run(arguments, self.git_aliases, place)
            hidden += [alias] if alias is not None else []
        elif name == "find":
            plan = find.plan(arguments, place)
            verdicts += plan.verdicts
            if plan.commands and not any(v.kind == "destructive" for v in plan.verdicts):  # `-exec cat` reads all
                verdicts += [v for start in plan.starts if (v := credentials.tree_verdict(start, place))][:1]
            for written, filled in plan.commands:
                if written:
                    nested = replace(command, words=written, assignments=(), redirects=())
                    self.command(nested, functions, depth, filled)
        elif runs is None or not runs.verdicts:
            listed = readonly.verdict(name, arguments, place)
            if listed.reason == readonly.NOT_LISTED and name in functions:
                listed = read_only(f"runs the function {name}, whose commands are checked on their own")
            verdicts.append(listed)
        self.place = links.after(name, arguments, self.place).wrote(writes.targets(name, arguments, ()) + produced)
        return verdicts

    def _move(self, name: str, words: tuple[Word, ...]) -> None:
        operands = [word for word in words[1:] if not (word.value or "").startswith("-") or word.value == "-"]
        if name == "popd" or (name == "pushd" and not operands):
            self.place = self.place.lost()
        else:
            self.place = self.place.moved(operands[0] if operands else None)


def _text(command: Command, quoted: bool = False) -> str:
    """The command's words joined by single spaces: as they run, or as written (`quoted`)."""

    def show(word: Word) -> str:
        return word.text if quoted else word.shown

    settings = [f"{a.name}={show(a.value) if a.value is not None else '(...)'}" for a in command.assignments]
    redirects = [redirect.text for redirect in command.redirects]
    if command.declaration:
        return " ".join([show(command.words[0]), *settings, *(show(w) for w in command.words[1:]), *redirects])
    return " ".join([*settings, *(show(word) for word in command.words), *redirects])
