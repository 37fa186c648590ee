"""The warm server: a per-user process that has imported everything and forks a fresh worker per invocation
(the client side, and what the command's first lines need, is mini_agent/warm/).

    server.py      accept, check the peer's uid and the installed package's stamp, fork a supervisor
    supervisor.py  per invocation: fork the worker, relay the client's signals, report how the worker ended
    worker.py      become the invocation: the client's fds, argv, environment, cwd and umask, then run the CLI
    preload.py     what the server imports and loads before it listens
    quiet.py       when a server started by a run may load: the run ended, or quiet

Sits at the top of the layers, beside entry.py: it imports the CLI (to preload and run it) and warm/.
"""
