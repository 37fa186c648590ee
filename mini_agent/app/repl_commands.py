"""The REPL's own slash commands (/help, /clear, /compact, ... /exit), each a function of the REPL it runs in."""

from __future__ import annotations

from functools import partial

from mini_agent.app.effort_command import effort_command
from mini_agent.app.init_command import run_in_repl as init
from mini_agent.app.rewind_command import fork_command, rewind_command
from mini_agent.app.slash import SlashCommands
from mini_agent.app.status_commands import config, doctor, permissions, status
from mini_agent.app.todos_command import todos_command
from mini_agent.settings import PERMISSION_MODES, mode_named

MODELS_SHOWN = 20
"""Model ids `/model` prints before it says how many more the endpoint lists."""


def builtin_commands(repl) -> SlashCommands:
    """The REPL's own commands, each run on `repl` (the interactive.Repl they belong to)."""
    commands = SlashCommands()
    for name, usage, summary, handler in (
        ("/help", "/help", "list the commands and keys", _help),
        ("/clear", "/clear", "start a new conversation", _clear),
        ("/compact", "/compact [focus]", "compact the conversation now", _compact),
        ("/context", "/context", "tokens by part of the context window", _context),
        ("/memory", "/memory [add NOTE]", "show the user memory file, or add a note to it", memory),
        ("/cost", "/cost", "tokens and money spent in this session", _cost),
        ("/model", "/model [name]", "show or switch the model", _model),
        ("/mode", "/mode [name]", "show or set the permission mode (Shift+Tab cycles)", _mode),
        ("/effort", "/effort [level]", "show or set how hard the model thinks (off to max)", effort_command),
        ("/trace", "/trace on|off", "show what context each turn adds", _trace),
        ("/undo", "/undo", "restore the files the last turn changed", _undo),
        ("/resume", "/resume [id]", "continue an earlier session of this directory", _resume),
        ("/rewind", "/rewind [N] [both|conversation|files]", "go back to before a prompt (Esc Esc)", rewind_command),
        ("/fork", "/fork", "go on in a copy of this session; this one stays as it is", fork_command),
        (
            "/mcp",
            "/mcp [reconnect [NAME] | login NAME]",
            "MCP servers: status, what they offer; reconnect, log in",
            _mcp,
        ),
        ("/status", "/status", "model, endpoint, mode, session, directory, sandbox", status),
        ("/config", "/config", "the settings in force (mini-agent config says where each comes from)", config),
        ("/permissions", "/permissions", "the permission mode, rules and protections", permissions),
        ("/doctor", "/doctor", "check the key, the endpoint, the sandbox and the MCP servers", doctor),
        ("/quit", "/quit", "leave (same as /exit)", lambda repl, argument: True),
        ("/init", "/init", "explore the project and write (or improve) its AGENTS.md", init),
        ("/jobs", "/jobs [stop ID]", "background jobs: list them, or stop one", _jobs),
        ("/skills", "/skills", "the skills the model is offered, where each is from", _skills),
        ("/todos", "/todos", "the agent's todo list", todos_command),
    ):
        commands.add(name, usage, summary, partial(handler, repl))
    commands.add("/exit", "/exit", "leave (Ctrl-D too)", lambda argument: True)
    return commands


def _help(repl, argument: str) -> None:
    width = max(repl.commands.usage_width(), repl.custom.usage_width())  # one column of descriptions
    custom, warnings = repl.custom.help_lines(width)
    for line in repl.commands.help_lines(width):
        repl.console.print(escape(line), highlight=False)
    from mini_agent.app.mcp_command import prompt_entries

    for _, usage, summary in prompt_entries(repl):  # the MCP servers' prompts
        repl.console.print(escape(f"{usage:<{width}}  {summary}"), highlight=False)
    for line in custom:
        repl.console.print(escape(line), highlight=False)
    for warning in warnings:
        repl.console.print(f"[yellow]! {escape(warning)}[/]")
    repl.console.print(
        "[dim]Enter sends · Alt+Enter or Esc Enter: new line · Tab completes /commands and @paths · "
        "Shift+Tab cycles the mode · Ctrl-O shows the last thinking · Ctrl-C clears or interrupts · Ctrl-D exits · "
        "!command runs it in your shell · #note saves a note to memory[/]"
    )


def _clear(repl, argument: str) -> None:
    repl.sessions.start_new(repl.agent)
    repl.console.print("[dim]New conversation.[/]")


def _compact(repl, argument: str) -> None:
    with repl.renderer.turn():
        repl.agent.keeper.compact_now(repl.agent.session, repl.agent.emit, argument or None)


def _context(repl, argument: str) -> None:
    from mini_agent.ui.context_view import context_lines

    for line in context_lines(repl.agent, ascii_only=not unicode_console(repl.console)):
        repl.console.print(escape(line), highlight=False)


def memory(repl, argument: str) -> None:
    from mini_agent.ui.memory_view import memory_command

    memory_command(repl.agent, repl.console, argument)


def _cost(repl, argument: str) -> None:
    from mini_agent.ui.context_view import cost_lines

    session = repl.agent.session
    for line in cost_lines(session.usage, session.usage_by_model or {repl.agent.settings.model: session.usage}):
        repl.console.print(escape(line), highlight=False)


def _model(repl, argument: str) -> None:
    """`/model`: the model in use and those the endpoint lists; `/model NAME` switches, warning on a name the
    endpoint does not list (it may still know it: some list only a few)."""
    listed = repl.agent.provider.list_models()
    if argument:
        if listed and argument not in listed:
            repl.console.print(
                f"[yellow]{escape(argument)} is not among the models {escape(repl.settings.base_url)} lists; "
                "using it anyway (see /model for the list).[/]"
            )
        repl.agent.switch_model(argument)
    repl.console.print(f"model {escape(repl.agent.settings.model)}")
    if listed and not argument:
        more = f", … ({len(listed)} in all)" if len(listed) > MODELS_SHOWN else ""
        shown = ", ".join(listed[:MODELS_SHOWN]) + more
        repl.console.print(escape(f"the endpoint lists: {shown}"), highlight=False)


def _mode(repl, argument: str) -> None:
    argument = mode_named(argument)
    if argument:
        if argument not in PERMISSION_MODES:
            repl.console.print(f"[yellow]Unknown mode {escape(argument)}; use {', '.join(PERMISSION_MODES)}.[/]")
            return
        repl.agent.set_mode(argument)
        repl.console.print(f"mode {repl.agent.mode}")
        return
    repl.console.print(f"mode {repl.agent.mode} (the modes: {', '.join(PERMISSION_MODES)}; /mode NAME or Shift+Tab)")


def _trace(repl, argument: str) -> None:
    if argument in ("on", "off"):
        repl.renderer.trace = argument == "on"
    elif not argument:
        repl.renderer.trace = not repl.renderer.trace
    repl.console.print(f"[dim]trace {'on' if repl.renderer.trace else 'off'}[/]")


def _mcp(repl, argument: str) -> None:
    from mini_agent.app.mcp_command import mcp_command

    if argument.split()[:1] == ["login"]:
        from mini_agent.app.mcp_login_command import login_command

        login_command(repl, argument.split()[1:])
        return
    mcp_command(repl, argument)


def _undo(repl, argument: str) -> None:
    for line in repl.sessions.undo_last(repl.agent):
        repl.console.print(escape(line), highlight=False)


def _resume(repl, argument: str) -> None:
    message = repl.sessions.resume(repl.agent, argument or None, repl.console)
    if message:
        repl.console.print(f"[dim]{escape(message)}[/]")


def _skills(repl, argument: str) -> None:
    from mini_agent.app.skills_command import skills_command

    skills_command(repl, argument)


def _jobs(repl, argument: str) -> None:
    from mini_agent.app.jobs_command import jobs_command

    jobs_command(repl, argument)


def unicode_console(console) -> bool:
    return (console.encoding or "").lower().replace("-", "").startswith("utf")


def escape(text: str) -> str:
    """Text shown as it is: not read as rich markup, its control characters named (rich would drop a CR)."""
    from rich.markup import escape as escape_markup

    from mini_agent.ui.terminal_text import visible

    return escape_markup(visible(text))
