"""What is known about one simple command while it is judged, and what its variable assignments add.

`PAGER='rm -rf ~' git log` runs the pager value as shell code, `LD_PRELOAD=x.so cmd` changes what cmd loads,
`PATH=. ls` changes which ls runs: settings other than locale and terminal ones are never read-only, and the
values of variables that hold commands are checked as scripts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mini_agent.safety.shell import services
from mini_agent.safety.shell.commands import Assignment
from mini_agent.safety.shell.verdict import Verdict, ordinary
from mini_agent.safety.shell.words import Word

SAFE_VARIABLES = {"LANG", "LANGUAGE", "TZ", "NO_COLOR", "COLUMNS", "LINES", "TERM"}
PAGERS = {"PAGER", "GIT_PAGER", "MANPAGER", "SYSTEMD_PAGER"}
# Variables whose value other programs run as a shell command: their value is checked like a script.
COMMAND_VARIABLES = PAGERS | {
    "EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "LESSOPEN", "LESSCLOSE", "BROWSER", "PROMPT_COMMAND",
}  # fmt: skip
# Variables that change which code later commands load or run, even when set on their own.
LOADER_VARIABLES = {
    "PATH", "BASH_ENV", "ENV", "IFS", "PS4", "SHELLOPTS", "BASHOPTS", "CDPATH", "GLOBIGNORE", "HOME",
    "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH", "PERL5LIB", "PERL5OPT", "PERLLIB",
    "RUBYOPT", "RUBYLIB", "CLASSPATH", "JAVA_TOOL_OPTIONS",
}  # fmt: skip


@dataclass
class Findings:
    """What is known about one command while it is judged."""

    verdicts: list[Verdict]
    code: list[Word] = field(default_factory=list)
    """Shell code the command runs (`bash -c`, PAGER=..., git -c core.pager=...), checked as scripts."""
    hidden: list[Word] = field(default_factory=list)
    """Shell code found inside interpreter code or a script file: checked, but not a form for rules."""
    forms: list[str] = field(default_factory=list)

    def settings(self, assignments: tuple[Assignment, ...], bare: bool) -> None:
        """What variable assignments add: prefixes other than locale and terminal settings make a command at
        least ordinary; a bare `x=1` is harmless unless it changes how later commands are found or loaded.
        Values of variables that hold commands (PAGER, GIT_SSH_COMMAND, ...) are code to check."""
        for assignment in assignments:
            name, value = assignment.name, assignment.value
            text = value.value if value is not None else None
            if name in PAGERS and text == "cat":
                continue
            if (service := services.setting(name, text)) is not None:
                self.verdicts.append(service)
            if name in COMMAND_VARIABLES:
                if text is None:
                    self.verdicts.append(ordinary(f"sets {name} to a command computed at run time"))
                else:
                    self.code.append(Word(text, text))
            if bare:
                if name in LOADER_VARIABLES or name.startswith(("LD_", "DYLD_", "GIT_")):
                    self.verdicts.append(ordinary(f"sets {name}, which changes what later commands run"))
            elif not (name in SAFE_VARIABLES or name.startswith("LC_")):
                self.verdicts.append(ordinary(f"sets {name} for the command, which can change what it runs"))
