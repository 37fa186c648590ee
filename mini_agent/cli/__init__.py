"""The command line: arguments, environment and config files -> Settings -> an exit status; nothing else.

    main.py        the `mini-agent` command (typer): flags -> Settings, then hands the run to app/
    common.py      what every subcommand shares: settings from files, environment and flags; usage errors
    config.py      effective settings from layers: defaults < user < project < environment < flags
    inspect.py     the subcommands that show: permissions, check-command, config, sandbox (+ sandbox run)
    mcp.py         `mini-agent mcp list|add|remove`
    server.py      `mini-agent server status|start|stop`
    undo.py        `mini-agent undo`
    acp.py         `mini-agent acp` (the Agent Client Protocol server, app/acp_server.py)
    help_text.py   `--help` without importing typer (cached per version and width)

The modules that declare commands do without `from __future__ import annotations`: typer reads every command's
annotations each time it builds the command line, and as strings each one was compiled and evaluated (~7 ms of a
start-up's ~10 ms build).

May import everything below it (app/ and down). Nothing imports cli but entry.py, __main__.py and warm/'s worker.
"""
