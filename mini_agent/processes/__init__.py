"""Child processes: the one way to start, confine, watch and kill them (bash, hooks, git, MCP stdio servers).

    run.py           run a (confined) command: its environment, output capture, timeouts (`run_launched`)
    tree.py          everything one command started, and the one way to kill all of it (`Lineage`);
                     cgroups.py (a command's own cgroup) and orphans.py (the agent as subreaper) serve it
    watchdog.py      a helper process that kills a child's group when we die (run as a script)
    jobs.py          background jobs: the session's table, started, read, stopped, ended with the session;
                     spool.py (their capped private output), spawner.py (the thread that forks them),
                     listeners.py (which loopback port a job alone listens on, from /proc)
    stdio_server.py  an MCP stdio server as our child: its command, environment and process group
    browser.py       the human's browser on a page (an OAuth login), without the agent's credentials

May import settings, safety (the sandbox a command is confined by) and the leaves; nothing above.
"""
