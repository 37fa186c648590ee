"""Custom slash commands: Markdown files the user or the project writes, found, read and expanded.

    catalog.py  where command files are found (project, user, .claude/commands), names, precedence, expansion
                of $ARGUMENTS / $1...
    files.py    one command file: its front matter (a small YAML subset read by hand; also read for agent
                definitions in subagents/) and its body; allowed-tools as permission rules
    turn.py     a command's model and allowed-tools for the one turn it runs

May import: errors, settings, config_files (where a project is), safety.rules; turn.py also the agent it adjusts
for a turn. Never ui/ or cli.
"""
