"""The subcommands that show rather than run: permissions, check-command, config, sandbox (and sandbox run)."""

import typer

from mini_agent.cli.common import environment_of, fail, resolved_from, settings_or_exit
from mini_agent.errors import MiniAgentError
from mini_agent.settings import PERMISSION_MODES, mode_named
from mini_agent.ui.terminal_text import visible


def register(app: typer.Typer) -> None:
    """Add the subcommands to the program's command line."""

    @app.command("permissions", short_help="List the permission rules in force and where each came from.")
    def permissions_command(
        context: typer.Context,
        as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
    ) -> None:
        """List the permission rules in force, where each came from, and the built-in protections."""
        from mini_agent.app.permissions_view import print_rules

        options = context.obj or {}
        allow, deny = options.get("allow", []), options.get("deny", [])
        settings = settings_or_exit(allow, deny, permission_mode=options.get("mode"))
        print_rules(settings, as_json, environment_of(context).stdout)

    @app.command("check-command", short_help="Show what the agent would do with a shell command, and why.")
    def check_command(
        context: typer.Context,
        command: str = typer.Argument(..., metavar="COMMAND", help="The shell command to classify."),
        mode: str | None = typer.Option(None, "--mode", help="default | accept-edits | auto | plan | bypass."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
    ) -> None:
        """Show what the agent would do with a shell command: its class, the decision in a mode, and why."""
        from mini_agent.app.permissions_view import print_command_check

        options = context.obj or {}
        mode = mode or options.get("mode")
        mode = mode and mode_named(mode)
        if mode is not None and mode not in (*PERMISSION_MODES, "bypass"):
            fail(f"Unknown permission mode {mode!r}; use one of {', '.join((*PERMISSION_MODES, 'bypass'))}.")
        settings = settings_or_exit(options.get("allow", []), options.get("deny", []), permission_mode=mode)
        print_command_check(settings, command, as_json, environment_of(context).stdout)

    sandbox_app = typer.Typer(
        help="What the OS sandbox enforces for shell commands here (MINI_AGENT_SANDBOX=auto|bubblewrap|landlock|"
        "seatbelt|off picks the mechanism), and `sandbox run -- CMD` to try a command under it.",
        rich_markup_mode=None,
    )
    app.add_typer(
        sandbox_app, name="sandbox", short_help="Show what the OS sandbox enforces here; `sandbox run -- CMD` tries it."
    )

    @sandbox_app.callback(invoke_without_command=True)
    def sandbox_command(
        context: typer.Context,
        as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
    ) -> None:
        """Show the sandbox mechanism, what each level allows in the current directory, and its limits."""
        if context.invoked_subcommand is not None:
            return
        from mini_agent.ui.sandbox_view import print_sandbox

        options = context.obj or {}
        settings = settings_or_exit(options.get("allow", []), options.get("deny", []))
        environment = environment_of(context)
        print_sandbox(settings, environment.cwd, as_json, environment.stdout)

    @sandbox_app.command("run", context_settings={"allow_interspersed_args": False})
    def sandbox_run(
        context: typer.Context,
        command: list[str] = typer.Argument(..., help="The command and its arguments (after --)."),
        level: str = typer.Option("workspace-write", "--level", help="read-only | workspace-write."),
        network: bool = typer.Option(False, "--network", help="Allow network access."),
    ) -> None:
        """Run a command confined in the current directory, streaming its output; exits with its status."""
        from mini_agent.ui.sandbox_view import run_confined

        if level not in ("read-only", "workspace-write"):
            fail(f"Unknown sandbox level {level!r}; use read-only or workspace-write.")
        options = context.obj or {}
        settings = settings_or_exit(options.get("allow", []), options.get("deny", []))
        cwd = environment_of(context).cwd
        raise typer.Exit(run_confined(settings, command, level, network, cwd))  # type: ignore[arg-type]

    @app.command("config", short_help="Show the effective settings and where each came from.")
    def config_command(
        context: typer.Context,
        as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
    ) -> None:
        """Show the effective settings and where each came from (defaults, config files, environment, flags)."""
        from mini_agent.cli.config_view import print_config

        options = context.obj or {}
        try:
            resolved = resolved_from(
                options.get("allow", []),
                options.get("deny", []),
                permission_mode=options.get("mode"),
                provider=options.get("provider"),
                model=options.get("model"),
            )
        except MiniAgentError as exc:
            print(visible(f"mini-agent: {exc}"), file=environment_of(context).stderr)
            raise typer.Exit(int(exc.exit_status)) from None
        print_config(resolved, as_json, environment_of(context).stdout)
