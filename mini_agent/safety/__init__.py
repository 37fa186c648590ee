"""Everything that decides what may run, and how: the permission policy and its rules, the workspace's
boundaries, the shell-command classifier, network address vetting, secrets and egress, and the OS sandbox
commands run in. The gate that applies the policy and asks a human is gate.py, beside the tool calls.

Nothing here is imported at start-up beyond what a decision needs; tree-sitter loads on the first command.

May import the leaves below it: errors, files, xmltext, locations, warm.paths (the warm server's directory,
hidden from commands). Never settings, tools, processes or anything above.
"""
