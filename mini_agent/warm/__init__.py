"""The warm start, client side: a per-user server that has imported everything (mini_agent/serve/) forks a
fresh worker for each invocation; this package is what the `mini-agent` command and everything below it need.

    paths.py     where the socket lives (a directory only the user can open), one per installation
    protocol.py  framed messages over the Unix socket, with the client's stdin/stdout/stderr as SCM_RIGHTS
    client.py    the tiny side the `mini-agent` command runs: hand the invocation over, forward signals
    spawn.py     start a server in the background (detached, its own session, stdio on /dev/null)
    stamp.py     the installed package's version and files' mtimes, so an upgrade is never served stale code
    control.py   `mini-agent server status|start|stop`

Imports only the standard library and `mini_agent` (the version): the command's first lines use it, and safety
uses paths.py (the socket directory is hidden from commands). It sits among the leaves of the layers.
"""
