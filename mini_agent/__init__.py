"""mini-agent: a terminal code agent for Anthropic-compatible endpoints.

The tree is the architecture. At the top sits the core: entry.py (the command's first steps: --version, --help
from help_text.py, the warm server; locations.py says where the user's files are; process_end.py ends the
process as the interpreter would, less its teardown), cli.py (flags -> Settings, the
wiring; cli_common.py, cli_inspect.py, cli_mcp.py, cli_server.py), settings.py and config.py (+ config_files.py),
errors.py, events.py (what the core emits), prompt.py (the three-segment system prompt), session.py, agent.py (the
loop) with tool_calls.py (a reply's tool calls) and preload.py (what the steps need, loaded while the requests
are out), compaction.py, and trust.py (what the human trusted of a project). Beside it, each concern in
its package:

    model/      talking to the model: the SDK client, replies, streams, faults, endpoints, usage and prices
    context/    context engineering: blocks, sources, enrichers, injection, token counts, the keeper
    tools/      the five tools and their registry
    mcp/        MCP servers as tool providers: definitions, connections, their tools
    hooks/      the user's shell commands on the agent's events: definitions, running one, what it decided
    warm/       the warm start: a per-user server of preloaded modules forking a worker per invocation
    commands/   custom slash commands from Markdown files
    subagents/  the task tool: a fresh agent loop for a sub-task, and named agent definitions
    safety/     what may run: the permission policy, the shell classifier, secrets, the OS sandbox
    undo/       shadow-git snapshots and the undo stack
    sessions/   session files: write, list, load, resume
    ui/         everything that touches the terminal

Layers point one way: ui and cli may import anything; nothing else imports ui or cli. This module holds the
version only: importing it does no I/O and loads nothing.
"""

__version__ = "0.1.0"
