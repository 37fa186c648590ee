"""`/init` (REPL) and `-p "/init"`: ask the model to explore the project and write its AGENTS.md, as Claude Code's
and Codex's /init do. The file is written by the model with the ordinary write_file / edit_file tools, so the
permission policy and undo see it like any other edit. When AGENTS.md exists the REPL asks the human first, and
the prompt asks to improve the file rather than replace it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from mini_agent.context.instruction_files import repository_root

FILE = "AGENTS.md"
OTHER_INSTRUCTIONS = (
    "CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    ".cursorrules",
    ".cursor/rules/",
    ".windsurfrules",
    ".clinerules",
    ".github/copilot-instructions.md",
)
"""Other tools' instruction files: the prompt names those that exist so their rules are carried over."""

WHAT = """\
Explore this repository and {task} {path}: the instructions every future coding agent (mini-agent, Codex, \
Claude Code and others read this file) is given at the start of each session here.

What the file should hold, in this order:
1. Commands: how to install dependencies, build, lint, type-check and run the tests, including how to run one \
test file or a single test. Take them from the build and CI files, not from guesses; say which need a service, \
a network or a long time.
2. Architecture: the big picture that takes reading several files to see (the main parts, how a request or \
data flows through them, where the entry points are, what the layers may import). Not a list of every file or \
directory: an agent can list those itself.
3. Conventions specific to this project, where it differs from the usual: code style and naming, error \
handling, how tests are written (fixtures, what is faked and what is real), commit and review rules, anything \
that must never be done.

How to go about it:
- First read what exists: README and the docs it links, the build files (pyproject.toml, package.json, \
Cargo.toml, go.mod, Makefile, justfile, ...), the CI workflows, the linter and formatter settings{others}.
- Keep it short: about one page. Every line should be something an agent would get wrong without it. No generic \
advice ("write clean code", "add tests", "handle errors", "never commit secrets"), no sections made up from \
nothing ("Tips", "Support", "Common tasks") unless the files you read say so, nothing repeated.
- Never copy secrets, tokens, internal host names or personal paths into it.
- {write}
- When it is written, say in two or three lines what the file covers and what you could not find out."""

NEW = "Write the file with the write_file tool, starting with `# AGENTS.md` and one line on what the project is."
IMPROVE = (
    "The file exists already (read it first): improve it rather than replace it. Keep what is right and useful, "
    "correct what is out of date, add what is missing from the list above, remove what is generic or wrong. "
    "Change it with edit_file (write_file only if most of it has to change), and do not drop anything the "
    "humans wrote there without saying why."
)


def target(cwd: str | Path) -> Path:
    """Where /init writes: the repository's root, else the working directory."""
    here = Path(os.path.abspath(cwd))
    return (repository_root(here) or here) / FILE


def init_prompt(cwd: str | Path, wishes: str = "") -> str:
    """The prompt /init sends for the project around `cwd`; `wishes`: what the user typed after /init."""
    path = target(cwd)
    root = path.parent
    present = [name for name in OTHER_INSTRUCTIONS if (root / name.rstrip("/")).exists()]
    if present:
        others = f", and the other tools' instruction files here: {', '.join(present)} (carry their rules over)"
    else:
        others = ", and any other agent instruction files (.cursor/rules/, .github/copilot-instructions.md, CLAUDE.md)"
    exists = path.exists()
    prompt = WHAT.format(
        task="improve" if exists else "write", path=path, others=others, write=IMPROVE if exists else NEW
    )
    return f"{prompt}\n\nThe user adds: {wishes.strip()}" if wishes.strip() else prompt


def overwrite_question(cwd: str | Path) -> str | None:
    """The question to ask before anything is sent, or None when there is no AGENTS.md to change."""
    path = target(cwd)
    return f"{path} exists: improve it?" if path.exists() else None


def run_in_repl(repl, argument: str, ask: Callable[[str], bool] | None = None) -> None:
    """`/init`: the question first when AGENTS.md exists (anything but y keeps it as it is), then one turn."""
    cwd = repl._cwd()
    question = overwrite_question(cwd)
    if question is not None and not (ask or _ask_on_terminal)(question):
        repl.console.print(f"[dim]{FILE} left as it is; nothing was sent.[/]")
        return
    repl._turn(init_prompt(cwd, argument))


def _ask_on_terminal(question: str) -> bool:
    """One key from the terminal, y for yes; keys typed before the question do not answer it."""
    from mini_agent.ui.keys import TerminalKeys
    from mini_agent.ui.terminal_text import visible

    sys.stderr.write(f"{visible(question)} [y/N] ")
    sys.stderr.flush()
    keys = TerminalKeys(sys.stdin.fileno())
    try:
        keys.discard_typeahead()
        key = keys.key()
    except (EOFError, KeyboardInterrupt, OSError):
        key = ""
    sys.stderr.write("\n")
    return key.strip().lower() == "y"
