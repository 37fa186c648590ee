"""mini-agent: a terminal code agent for Anthropic-compatible endpoints.

The tree is the architecture, in layers from the top down (an import only points to its own layer or one below;
tests/test_architecture.py holds the list and checks every import):

    entry.py    the command's first lines: --version, --help, the warm client, else cli
    cli/        arguments + environment + config files -> Settings -> exit status
    app/        the composition root (launch.py) and the front ends: one-shot, REPL, the showing subcommands
    ui/         drawing only, and the one question that asks the human
    subagents/ commands/ sessions/ skills/   extensions above the agent
    agent.py    the loop; tool_calls.py and gate.py: a reply's calls, decided and run
    context/    blocks, sources, enrichers, the keeper, compaction; conversation.py: the transcript
    mcp/ model/ hooks/ tools/ undo/   providers of tools and replies; events.py: what the core emits
    processes/  the one way to start, confine, watch and kill a child
    settings.py, safety/   the frozen settings; the policy primitives (shell classifier, sandbox, secrets)
    files/ xmltext.py usage.py trust.py locations.py process_end.py gc_pause.py errors.py   leaves

This module holds the version only: importing it does no I/O and loads nothing.
"""

__version__ = "0.1.0"
