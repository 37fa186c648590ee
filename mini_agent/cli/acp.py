"""`mini-agent acp`: serve the Agent Client Protocol on stdio for an editor (app/acp_server.py).

The flags before `acp` (`--model`, `--permission-mode`, `--allow`, `--max-steps`, ...) apply to every session
the editor opens; each session's settings are read for its own directory (its project's config included).
"""

from pathlib import Path

import typer

from mini_agent.cli.common import fail, resolved_from


def register(app: typer.Typer) -> None:
    @app.command("acp", short_help="Serve the Agent Client Protocol on stdio, for editors (Zed and others).")
    def acp_command(context: typer.Context) -> None:
        """Run as an Agent Client Protocol server on stdin/stdout: an editor starts it and drives sessions,
        prompts, permission questions and cancels. Logs go to stderr. See docs/editors.md."""
        options = context.obj if isinstance(context.obj, dict) else {}
        flags = {**options.get("flags", {}), "permission_mode": options.get("mode")}
        allow, deny = options.get("allow", []), options.get("deny", [])
        try:
            from mini_agent.app.acp_server import serve
        except ImportError as exc:  # the SDK is a dependency; a broken install says what is missing
            fail(f"acp needs the agent-client-protocol package ({exc}).")

        def settings_for(cwd: Path):
            return resolved_from(allow, deny, cwd=cwd, **flags).settings

        resolved_from(allow, deny, **flags)  # a bad config or flag is a usage error now, not at the first session
        raise typer.Exit(int(serve(settings_for)))
