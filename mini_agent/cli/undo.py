"""`mini-agent undo`: undo a stored session's last turns without starting a session (app/undo_command.py)."""

import typer

from mini_agent.cli.common import environment_of, fail, settings_or_exit
from mini_agent.errors import MiniAgentError


def register(app: typer.Typer) -> None:
    @app.command("undo", short_help="Restore the files the last turn of this directory's latest session changed.")
    def undo_command(
        context: typer.Context,
        session: str | None = typer.Option(None, "--session", help="The session (id or id prefix) [default: latest]."),
        turns: int = typer.Option(1, "--turns", "-n", help="Undo this many turns that changed files, newest first."),
        list_only: bool = typer.Option(False, "--list", help="Show the turns that can be undone; change nothing."),
        as_json: bool = typer.Option(False, "--json", help="Print JSON for scripts."),
    ) -> None:
        """Restore the files the last turn(s) of a session changed, bash and MCP changes included (one-shot `-p`
        runs too), and say what could not be restored. Exit 0 only when everything was."""
        from mini_agent.app.undo_command import run_undo

        if turns < 1:
            fail("--turns must be 1 or more.")
        options = context.obj or {}
        settings = settings_or_exit(options.get("allow", []), options.get("deny", []))
        try:
            environment = environment_of(context)
            status = run_undo(settings, session, turns, list_only, as_json, environment.stdout, environment.stderr)
        except MiniAgentError as exc:
            print(f"mini-agent: {exc}", file=environment_of(context).stderr)
            raise typer.Exit(int(exc.exit_status)) from None
        raise typer.Exit(int(status))
