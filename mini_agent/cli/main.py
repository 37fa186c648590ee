"""The command line: flags and environment -> Settings; picks one-shot, piped or interactive use; exit codes.

This is the one place that wires objects together. Start-up matters: `--version` imports nothing but this
package's metadata, `--help` only typer, and a run starts importing the model SDK in the background before
anything else so that import overlaps the rest of start-up.
"""

import sys

import typer

from mini_agent import __version__
from mini_agent.app.environment import Environment
from mini_agent.cli.acp import register as register_acp
from mini_agent.cli.common import fail, settings_from
from mini_agent.cli.inspect import register
from mini_agent.cli.mcp import register as register_mcp
from mini_agent.cli.positional import PRINT_ALONE, PROMPT, PromptOrCommand, print_alone
from mini_agent.cli.server import register as register_server
from mini_agent.cli.undo import register as register_undo
from mini_agent.errors import ExitStatus, MiniAgentError
from mini_agent.settings import OUTPUT_FORMATS, PERMISSION_MODES, declared, mode_named
from mini_agent.ui.terminal_text import visible

INPUT_FORMATS = ("text", "stream-json")

app = typer.Typer(
    cls=PromptOrCommand,  # `mini-agent "fix the bug"`: a first word that names no subcommand is a prompt
    subcommand_metavar="[PROMPT] | COMMAND [ARGS]...",
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


DECLARED = dict(declared())


def _setting(name: str, default: object = None):
    """A setting's option, its flags and help read from the declaration on the Settings field."""
    return typer.Option(default, *DECLARED[name].flags, help=DECLARED[name].help)


def _version(value: bool) -> None:
    if value:
        print(f"mini-agent {__version__}")
        raise typer.Exit()


@app.callback(
    invoke_without_command=True,
    help=(
        "A terminal code agent. Without -p and with a terminal, starts an interactive session; "
        '`mini-agent "TASK"` starts it with TASK as the first prompt; '
        "`mini-agent -p TASK` runs one task and exits; piped input becomes the prompt, or, with -p or a TASK, "
        "an attachment beside it (e.g. `git diff | mini-agent -p 'review this'`)."
    ),
    epilog=(
        "Exit codes: 0 success, 1 runtime error, 2 usage or configuration error, 3 step limit reached, "
        "4 a tool call was refused, 130 interrupted.\n\n"
        "Start-up: the first run leaves a warm server behind that makes the next runs start fast; it stops "
        "after 10 idle minutes. None is started in CI without a terminal or after the subcommands. "
        "`mini-agent server status|stop`; MINI_AGENT_NO_SERVER=1 turns it off."
    ),
)
def run(
    context: typer.Context,
    prompt: str | None = typer.Option(None, "-p", "--print", help="Run this task non-interactively and exit."),
    output_format: str = typer.Option(
        "text", "--output-format", help="text | json | stream-json (with -p or piped input)."
    ),
    input_format: str = typer.Option(
        "text",
        "--input-format",
        help="text | stream-json: user messages as JSON lines on stdin, each a turn of one session (with -p and "
        "--output-format stream-json).",
    ),
    verbose: bool = typer.Option(
        False, "--verbose", help="Accepted for scripts written for claude -p: stream-json is always complete."
    ),
    model: str | None = _setting("model"),
    base_url: str | None = _setting("base_url"),
    provider: str | None = _setting("provider"),
    permission_mode: str | None = _setting("permission_mode"),
    yes: bool = typer.Option(False, "--yes", "-y", help="Same as --permission-mode auto."),
    allow: list[str] = typer.Option(
        [], "--allow", help="Allow calls matching a rule, e.g. 'bash(npm test)' or 'edit_file(src/**)'; repeatable."
    ),
    deny: list[str] = typer.Option(
        [], "--deny", help="Refuse calls matching a rule, e.g. 'bash(git push *)'; repeatable."
    ),
    skip_permissions: bool = typer.Option(
        False,
        "--dangerously-skip-permissions",
        help="Run every tool call without asking (deny rules still apply). Only for disposable sandboxes.",
    ),
    max_steps: int | None = _setting("max_steps"),
    max_tokens: int | None = _setting("max_tokens"),
    effort: str | None = _setting("effort"),
    max_retries: int | None = _setting("max_retries"),
    continue_: bool = typer.Option(False, "--continue", "-c", help="Continue the latest session of this directory."),
    resume: str | None = typer.Option(
        None,
        "--resume",
        help="Continue a session by id; without an id, list this directory's sessions and pick one.",
    ),
    fork_session: bool = typer.Option(
        False, "--fork-session", help="With --continue or --resume: go on in a new session (new id) holding a copy."
    ),
    image: list[str] = typer.Option(
        [], "--image", "-i", help="Attach an image file to the -p prompt (PNG, JPEG, GIF, WebP); repeatable."
    ),
    trace: bool = _setting("trace", False),
    compact_threshold: float | None = _setting("compact_threshold"),
    compact_focus: str | None = _setting("compact_focus"),
    compact_first: bool = _setting("compact_first", False),
    trust_project_mcp: bool = _setting("trust_project_mcp", False),
    trust_project_hooks: bool = _setting("trust_project_hooks", False),
    trust_project_rules: bool = _setting("trust_project_rules", False),
    show_prompt: bool = typer.Option(
        False, "--show-prompt", help="Print the exact system prompt and tool schemas, then exit."
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    environment = context.obj if isinstance(context.obj, Environment) else Environment.of_process()
    started = environment.clock()
    if output_format not in OUTPUT_FORMATS:
        fail(f"Unknown output format {output_format!r}; use one of {', '.join(OUTPUT_FORMATS)}.")
    if input_format not in INPUT_FORMATS:
        fail(f"Unknown input format {input_format!r}; use one of {', '.join(INPUT_FORMATS)}.")
    if input_format == "stream-json" and output_format != "stream-json":
        fail("--input-format stream-json needs --output-format stream-json.")
    if yes and permission_mode not in (None, "auto"):
        fail("--yes means --permission-mode auto; pass only one of them.")
    if skip_permissions and (yes or permission_mode is not None):
        fail("--dangerously-skip-permissions replaces the permission mode; do not pass --yes or --permission-mode.")
    mode = "bypass" if skip_permissions else "auto" if yes else permission_mode and mode_named(permission_mode)
    if mode is not None and mode not in (*PERMISSION_MODES, "bypass"):
        fail(f"Unknown permission mode {mode!r}; use one of {', '.join(PERMISSION_MODES)}.")
    context.obj = {
        "allow": allow,
        "deny": deny,
        "mode": mode,
        "provider": provider,
        "model": model,
        "environment": environment,
        "flags": _flags_given(context.params),  # for subcommands that run sessions (acp)
    }
    if context.invoked_subcommand is not None:
        return
    if input_format == "stream-json":  # the turns come on stdin; -p alone says "print mode"
        prompt, first = (context.meta.get(PROMPT) if prompt == PRINT_ALONE else prompt), None
    else:
        prompt, first = _prompts(prompt, context.meta.get(PROMPT), environment)
    settings = None
    try:
        settings = settings_from(allow, deny, **{**_flags_given(context.params), "permission_mode": mode})
        if settings.permission_mode == "bypass":
            _warn_bypass()
        if show_prompt:
            from mini_agent.app.show_prompt import print_prompt

            one_shot = prompt is not None or not environment.stdin_isatty
            print_prompt(settings, environment.stdout, one_shot=one_shot)
            raise typer.Exit(ExitStatus.SUCCESS)
        from mini_agent.app.launch import launch

        if continue_ and resume is not None:
            fail("--continue and --resume both pick a session; pass one of them.")
        if fork_session and not continue_ and resume is None:
            fail("--fork-session forks the session --continue or --resume picks; pass one of them.")
        target = "" if continue_ else resume
        if resume == PICK:
            target = _pick_session(settings, environment)
        status = launch(
            settings,
            prompt,
            output_format,
            target,
            environment,
            fork=fork_session,
            images=tuple(image),
            first=first,
            input_format=input_format,
        )
    except KeyboardInterrupt:
        print("mini-agent: Interrupted.", file=environment.stderr)
        status = ExitStatus.INTERRUPTED
    except MiniAgentError as exc:
        from mini_agent.errors import redact

        message = redact(str(exc), _known_secrets(environment.variables))
        print(visible(f"mini-agent: {message}"), file=environment.stderr)
        status = exc.exit_status
        if output_format != "text":  # a script reading stdout gets its one result object, failure or not
            import json

            from mini_agent.app.oneshot import failure_record

            chosen = settings.model if settings is not None else model
            record = failure_record(message, status, chosen, environment.clock() - started)
            print(json.dumps(record, ensure_ascii=False), file=environment.stdout)
    raise typer.Exit(int(status))


register(app)  # permissions, check-command, config, sandbox
register_mcp(app)  # mcp list|add|remove
register_server(app)  # server status|start|stop
register_undo(app)  # undo [--session ID] [--turns N] [--list]
register_acp(app)  # acp: the Agent Client Protocol on stdio, for editors


def _prompts(printed: str | None, positional: str | None, environment: Environment) -> tuple[str | None, str | None]:
    """(the one-shot prompt, the REPL's first prompt). A positional prompt starts the REPL on a terminal, as
    `claude "..."` does; with `-p` and no text of its own, or with piped stdin (no terminal to hold a session),
    it is the one-shot task, stdin attached beside it, as `-p TASK` makes it."""
    if printed is not None and printed != PRINT_ALONE and positional is not None:
        fail(f"Two prompts: -p {printed!r} and {positional!r}; pass the task once, with -p or after the options.")
    if printed == PRINT_ALONE:
        if positional is None and environment.stdin_isatty:
            fail("-p without a task: pass it as -p TASK, after the options, or pipe it on stdin.")
        return positional, None
    if positional is not None and not environment.stdin_isatty:
        return positional, None
    return printed, positional


def _flags_given(params: dict[str, object]) -> dict[str, object]:
    """The declared settings' flag values; None where not given, so a file or variable below is not overridden
    (a switch left off is not given)."""
    values = {name: params[name] for name, declaration in DECLARED.items() if declaration.flags}
    return {name: (value or None) if isinstance(value, bool) else value for name, value in values.items()}


def _warn_bypass() -> None:
    print(
        "mini-agent: WARNING: --dangerously-skip-permissions: every tool call runs without asking, destructive "
        "commands included. Use it only in a disposable sandbox (a container or VM you can throw away).",
        file=sys.stderr,
    )


def _known_secrets(variables) -> list[str]:
    return [variables.get(name, "") for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")]


PICK = "\0pick"
"""--resume given without an id: choose from a list."""


def _pick_session(settings, environment: Environment) -> str | None:
    from mini_agent.app.lifecycle import listing
    from mini_agent.sessions import SessionStore

    sessions = SessionStore(settings.data_dir, settings.secrets).list(settings.cwd)
    if not sessions:
        print("mini-agent: no earlier session in this directory; starting a new one.", file=environment.stderr)
        return None
    for line in listing(sessions[:20]):
        print(visible(line), file=environment.stderr)
    if environment.stdin is None or not environment.stdin_isatty:
        fail("--resume without an id needs a terminal to choose; pass the id: --resume ID.")
    answer = input("Session number (Enter for 1): ").strip() or "1"
    if not answer.isdigit() or not 0 < int(answer) <= min(20, len(sessions)):
        fail(f"No session number {answer!r}.")
    return sessions[int(answer) - 1].id


def _optional_value(argv: list[str], option: str, missing: str) -> list[str]:
    """`--resume` may stand alone: give it a value that means "pick" when no id follows."""
    fixed = list(argv)
    for index, word in enumerate(fixed):
        if word == option and (index + 1 == len(fixed) or fixed[index + 1].startswith("-")):
            fixed.insert(index + 1, missing)
            break
    return fixed


def main(argv: list[str] | None = None, environment: Environment | None = None) -> None:
    """The command: ends by raising SystemExit with the exit status (process_end.run_and_exit turns that into
    the process's end)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # the fastest path: no typer, no parsing
        print(f"mini-agent {__version__}", file=environment.stdout if environment else sys.stdout)
        return
    argv = _optional_value(argv, "--resume", PICK)
    if "-p" in argv or "--print" in argv:
        argv = print_alone(argv, _root_options)
    # What `app(...)` does, less building the click command again (pretty exceptions are off: typer's
    # excepthook would only hand over to the interpreter's).
    command()(args=argv, prog_name="mini-agent", obj=environment)


_COMMAND: list = []


def command():
    """The click command typer builds from `app`, built once per process (~10 ms): the warm server builds it
    before it listens (serve/preload.py), so a worker parses its arguments at once."""
    if not _COMMAND:
        _COMMAND.append(typer.main.get_command(app))
    return _COMMAND[0]


def _root_options() -> set[str]:
    return {name for param in command().params for name in (*param.opts, *param.secondary_opts)}


def run_in_process(argv: list[str], environment: Environment) -> int:
    """The command inside this process, in `environment`: returns the exit status instead of ending the process.
    For tests; the installed command is `main` under process_end.run_and_exit (entry.py)."""
    from mini_agent.process_end import exit_status

    with environment.installed():
        try:
            main(argv, environment)
            status = 0
        except SystemExit as exc:
            status = exit_status(exc.code)
        except KeyboardInterrupt:
            status = ExitStatus.INTERRUPTED  # the real process dies of SIGINT instead (process_end.py)
        except BaseException:
            import traceback

            traceback.print_exc(file=environment.stderr)
            status = 1
        finally:
            _end_as_a_process_would()
        for stream in (environment.stdout, environment.stderr):
            stream.flush()
    return int(status)


def _end_as_a_process_would() -> None:
    """What the end of the process would do after a run in this one: stop the MCP servers it started (their
    atexit), its background jobs (theirs) and kill what its commands left running (the watchdog's helper sees its
    pipe close)."""
    for name in ("mini_agent.mcp.connection", "mini_agent.processes.jobs"):
        module = sys.modules.get(name)
        if module is not None:
            module.stop_all()
    watchdog = sys.modules.get("mini_agent.processes.watchdog")
    if watchdog is not None:
        watchdog.release()
