"""`mini-agent server status|start|stop`: the warm server, from the command line."""

import sys

import typer

from mini_agent.errors import ExitStatus


def register(app: typer.Typer) -> None:
    server = typer.Typer(
        help="The warm server (fast start-up): status, start, stop.",
        no_args_is_help=True,
    )

    @server.command("status")
    def status() -> None:
        """Whether the server runs; its pid, uptime, memory and socket."""
        from mini_agent.warm.control import status_lines

        for line in status_lines():
            print(line)

    @server.command("start")
    def start() -> None:
        """Start the server now and wait until it answers (it also starts by itself on first use)."""
        from mini_agent.warm.control import start as start_server

        state = start_server()
        if state is None:
            print("mini-agent: the warm server did not come up.", file=sys.stderr)
            raise typer.Exit(ExitStatus.ERROR)
        print(f"warm server: running, pid {state['pid']}")

    @server.command("stop")
    def stop() -> None:
        """Stop the server. Runs in progress go on; the next invocation starts the normal way."""
        from mini_agent.warm.control import stop as stop_server

        pid = stop_server()
        print("warm server: not running" if pid is None else f"warm server: stopped (pid {pid})")

    app.add_typer(server, name="server")
