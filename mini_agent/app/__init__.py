"""The composition root and the front ends: where a run is wired together and meets the human or a script.

    launch.py          THE composition root: read piped input, build the provider, ask the trust questions,
                       then pick the front end
    build.py           the one builder: the agent made complete (tools, sub-agents, context, hooks, MCP, undo,
                       session), never assigned to afterwards
    agent_build.py     the REPL's agent, built behind its first prompt
    oneshot.py         -p runs: text, json and stream-json output (turns.py: one turn's tally and end)
    stream_input.py    --input-format stream-json: user messages on stdin, each a turn of one session
    repl.py            the interactive REPL (repl_commands.py, slash.py, custom_commands.py; todos_command.py:
                       /todos)
    lifecycle.py       a session's life outside the loop: its file, /clear, undo by turn
    hooks_setup.py, mcp_setup.py, rules_setup.py   a project's hooks, servers and allow rules at start-up
    show_prompt.py     `--show-prompt`
    undo_command.py    `mini-agent undo`
    environment.py     the `Environment` the front ends read (streams, terminals, variables, cwd, clock)
    acp_*.py           `mini-agent acp`: the Agent Client Protocol front end for editors (server, runner,
                       session, updates, permissions, prompt)

May import the extensions (subagents, commands, sessions), the agent and everything below; never cli.
"""
