"""`!command` in the REPL: the user's own command, run in their shell, its output shown and told to the model.

It is the human's command, typed at their own prompt: no permission question and no sandbox, as if run in
another terminal. It still starts and dies through the one way children do (processes/run.py): its own process
group, stdin closed, output bounded (the bash tool's cap), the agent's credentials left out of its environment,
killed with everything it started on Ctrl-C, and nothing of it outlives the session. The output is shown through
the terminal sanitiser and joins the next turn's user message, as Claude Code sends it: `<bash-input>` and
`<bash-stdout>` (stdout and stderr interleaved in the order written, with the exit line, as the bash tool returns
them), XML-escaped, known secrets masked as in a tool's result. It is an undo step of its own: a command that
changed files is undone by the next /undo.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from mini_agent.app.lifecycle import SHELL
from mini_agent.app.repl_commands import escape
from mini_agent.model.wellformed import safe_text
from mini_agent.processes.run import BoundedOutput, child_environment, run_captured
from mini_agent.tools.bash import NON_INTERACTIVE_ENV, OUTPUT_LIMIT
from mini_agent.tools.exit_line import exit_line, shell_exit
from mini_agent.xmltext import escape as xml_escape

TIMEOUT = 600
"""Seconds before the command is killed: the bash tool's longest. Ctrl-C stops it sooner."""


@dataclass(frozen=True)
class ShellEscape:
    command: str
    output: str
    """What it printed (head and tail kept when long), then how it ended."""

    def for_model(self) -> str:
        return (
            f"<bash-input>{xml_escape(self.command)}</bash-input>\n<bash-stdout>{xml_escape(self.output)}</bash-stdout>"
        )


def run_shell_escape(repl, command: str) -> None:
    agent = repl.agent
    undo = repl.sessions.undo
    undo.begin_turn()
    undo.before_change()  # it may change files: /undo puts them back
    output = BoundedOutput(OUTPUT_LIMIT // 2, OUTPUT_LIMIT // 2)
    env = {**child_environment(), **NON_INTERACTIVE_ENV}
    try:
        finished = run_captured([user_shell(env), "-c", command], agent.ctx.cwd, env, TIMEOUT, output)
        ending = exit_line(*shell_exit(finished.returncode))
        if finished.timed_out:
            ending = f"Killed after {TIMEOUT} s. {ending}"
    except KeyboardInterrupt:  # the group is already killed
        ending = "Interrupted: the user pressed Ctrl-C and the command and every process it started were killed."
    except OSError as exc:
        ending = f"Could not start the shell: {exc}"
    finally:
        if repl.sessions.writer is not None:  # `mini-agent undo --list` names the step by its command
            repl.sessions.writer.write({"type": SHELL, "command": command})
        warning = repl.sessions.after_turn()
    ran = ShellEscape(command, _text(output) + ending)
    repl.console.print(escape(ran.output), highlight=False)  # the user's own terminal: as a shell would show it
    if warning:
        repl.console.print(f"[yellow]! {escape(warning)}[/]")
    agent.secrets.refresh()  # a .env it wrote or printed
    told = ShellEscape(agent.secrets.mask(command), agent.secrets.mask_output(ran.output, "the output of a ! command"))
    agent.tell_next_turn(safe_text(told.for_model()))  # known secrets masked, as in a tool's result


def user_shell(env: dict[str, str]) -> str:
    """$SHELL when it names a program that exists, else bash."""
    shell = env.get("SHELL", "")
    if os.path.isabs(shell) and os.access(shell, os.X_OK):
        return shell
    return next((path for path in ("/bin/bash", "/usr/bin/bash") if os.access(path, os.X_OK)), "/bin/sh")


def _text(output: BoundedOutput) -> str:
    text = output.head + (f"\n[... {output.omitted} characters omitted ...]\n" if output.omitted else "") + output.tail
    return text if not text or text.endswith("\n") else text + "\n"
