"""Claude Code's slash commands that mini-agent has no command of that name for, each with what to use instead,
and what each REPL-only command is from the shell (for `-p "/name"`, which is a usage error).

Claude Code's names that are commands here (/help, /clear, /compact, /context, /memory, /cost, /model, /resume,
/mcp, /exit, and /quit, /status, /permissions, /config, /doctor) are in the REPL's table, app/repl_commands.py;
a name is in one place or the other (tests/app/test_habits.py). A custom command file of one of these names
wins over the answer here, as it would over no command at all.
"""

from __future__ import annotations

INSTEAD = {
    "/agents": "Sub-agents are Markdown files in .mini-agent/agents/ or agents/ of the user directory; the model "
    "starts them with its task tool. See docs/subagents-and-commands.md.",
    "/review": 'Ask for it in words ("review the uncommitted changes"), or from the shell: '
    "git diff | mini-agent -p 'review this'. A .mini-agent/commands/review.md file makes /review your own.",
    "/security-review": 'Ask for it in words ("look for security problems in the diff"), or write a custom '
    "command (.mini-agent/commands/security-review.md).",
    "/pr-comments": 'Ask for it in words ("show the review comments on PR 42"): the model runs gh through bash.',
    "/login": "There is no login: mini-agent uses ANTHROPIC_API_KEY (or your provider's variable). "
    "/config shows which key is in use.",
    "/logout": "There is no login: unset ANTHROPIC_API_KEY (or your provider's variable) to stop using a key.",
    "/bug": "mini-agent sends no reports. /status gives the session id; the session file (sessions/ in the data "
    "directory) holds the whole conversation to attach to a report.",
    "/feedback": "mini-agent sends no reports. /status gives the session id; the session file (sessions/ in the "
    "data directory) holds the whole conversation to attach to a report.",
    "/add-dir": "Tools work in the directory mini-agent started in; start it in a common parent to work on several, "
    "or mention a file elsewhere by absolute path (writes outside the working directory ask first).",
    "/vim": "No vim mode: the prompt has Emacs-style keys (Ctrl-A, Ctrl-E, Ctrl-K, ...); /help lists the others.",
    "/terminal-setup": "Nothing to set up: Alt+Enter, or Esc then Enter, inserts a new line in any terminal.",
    "/export": "The conversation is already saved as it happens: a JSONL file under sessions/ in the data "
    "directory (/status names the session). --continue or /resume picks it up again.",
    "/hooks": "Hooks are set in config.toml ([[hooks.<Event>]] tables), and a project's .claude/settings.json hooks "
    "are read too; `mini-agent config` lists those in force. See docs/hooks.md.",
    "/ide": "No IDE integration: mini-agent works in the terminal on the files on disk.",
    "/install-github-app": "Not available: mini-agent has no GitHub app. Run it in CI with -p instead.",
    "/release-notes": "mini-agent --version gives the version; the changes are in the repository's history.",
    "/upgrade": "Upgrade with the tool you installed with (pipx upgrade, uv tool upgrade, pip install -U).",
    "/usage": "/cost shows the tokens and the money of this session.",
    "/output-style": "Not available: the answer streams as Markdown; -p --output-format json|stream-json for scripts.",
    "/statusline": "The status line after each turn is built in (tokens, cache, cost, context); it is not "
    "configurable.",
    "/sandbox": "The sandbox is always on for commands that run without your yes: /doctor says which mechanism; "
    "`mini-agent sandbox` shows what it enforces here.",
    "/plan": "/mode plan (or Shift+Tab) switches to plan mode.",
    "/theme": "No themes: colours follow your terminal's; NO_COLOR=1 turns them off.",
    "/privacy-settings": "No account, so no privacy settings: nothing is sent anywhere but to your model endpoint.",
    "/allowed-tools": "/permissions shows the rules; add one with --allow or [permissions] in config.toml.",
    "/approved-tools": "/permissions shows the rules; add one with --allow or [permissions] in config.toml.",
    "/skills": "Custom commands are the nearest thing: Markdown files in .mini-agent/commands/ (or "
    ".claude/commands/); /help lists them.",
    "/plugin": "No plugins: add tools with MCP servers (`mini-agent mcp add`), commands with custom command files.",
}
"""Claude Code's name -> what to do here instead."""

FROM_THE_SHELL = {
    "/help": "mini-agent --help",
    "/config": "mini-agent config",
    "/permissions": "mini-agent permissions",
    "/undo": "mini-agent undo",
    "/mcp": "mini-agent mcp list",
    "/resume": "mini-agent --resume",
    "/doctor": "mini-agent sandbox; mini-agent mcp list",
    "/status": "mini-agent config",
    "/model": "mini-agent --model NAME -p ...",
    "/mode": "mini-agent --permission-mode MODE -p ...",
    "/compact": "mini-agent --continue --compact -p ...",
}
"""A REPL command -> the command line that does its work without a session, where there is one."""


def instead(name: str) -> str | None:
    """What to use instead of Claude Code's `name`, or None when it is not one of its commands we lack."""
    return INSTEAD.get(name)


def not_in_one_shot(name: str) -> str:
    """Why `-p "/name"` is refused, and what to run instead."""
    shell = FROM_THE_SHELL.get(name)
    answer = instead(name)
    text = f"{name} is a command of the interactive session, not a task: -p would send it to the model as text."
    if shell:
        text += f" From the shell: {shell}."
    elif answer:
        text += f" {answer}"
    else:
        text += f" Run mini-agent and type {name} there."
    return text
