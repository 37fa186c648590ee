"""Everything that decides what may run, and how: the permission policy and its rules, the workspace's
boundaries, the shell-command classifier, network address vetting, the gate that asks a human, and the OS
sandbox commands run in.

Nothing here is imported at start-up beyond what a decision needs; tree-sitter loads on the first command.

May import: errors, settings, tools.base (a call's tool and paths), warm.paths (the warm server's directory, hidden
from commands). Never the agent, context/, ui/ or cli.
"""
