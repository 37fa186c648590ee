"""The warm start: a per-user server that has imported everything forks a fresh worker for each invocation.

    paths.py     where the socket lives (a directory only the user can open), one per installation
    protocol.py  framed messages over the Unix socket, with the client's stdin/stdout/stderr as SCM_RIGHTS
    client.py    the tiny side the `mini-agent` command runs: hand the invocation over, forward signals
    spawn.py     start a server in the background (detached, its own session, stdio on /dev/null)
    server.py    accept, check the peer's uid and the installed package's stamp, fork a supervisor
    supervisor.py  per invocation: fork the worker, relay the client's signals, report how the worker ended
    worker.py    become the invocation: the client's fds, argv, environment, cwd and umask, then run the CLI
    preload.py   what the server imports and loads before it listens
    stamp.py     the installed package's version and files' mtimes, so an upgrade is never served stale code
    control.py   `mini-agent server status|start|stop`

Imports: paths, protocol, client and spawn import only the standard library and `mini_agent` (the version), so
the command stays fast; server, supervisor and worker import the CLI, which they preload and run. Nothing here
imports ui or cli at module level except preload.py and worker.py, which exist to run them.
"""
