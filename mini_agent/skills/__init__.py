"""Agent Skills: folders holding a SKILL.md (front matter with a name and a description, then instructions) and
the files it points to, in `.mini-agent/skills/`, `.claude/skills/` and the user's directories. The model is
offered the names and descriptions; a skill's body and its files reach it only when it uses the skill.

    files.py    one skill folder: its SKILL.md's front matter (commands/files.py's reader) and body
    catalog.py  where skills are found, precedence, and which are withheld until the human trusts them
    tool.py     the `skill` tool: the list in its description, a skill's body and files for a call

May import: commands.files (the front matter reader), context (the record of what the agent wrote:
instruction_trust, skill_trust), safety (where definitions are), tools.base, xmltext. Never ui/, cli or the
agent: app/ adds the tool (build.py), subagents/ preloads skills an agent file names.
"""
