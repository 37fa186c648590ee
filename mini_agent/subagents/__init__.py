"""Sub-agents: the `task` tool that hands a self-contained sub-task to a fresh agent loop, the loop's wiring
(its own conversation and step budget, the parent's provider, permission mode and rules, never wider), and the
named agent definitions in `.mini-agent/agents/*.md`.

definitions.py reads the named agents, task_tool.py builds the tool the model sees, delegation.py runs a child.

May import: the agent and its core modules (agent, conversation, events, settings, errors), usage, tools/
(the registry), safety/ (through the agent's gate) and skills/ (an agent file's `skills`, preloaded). Never ui/
or cli; nothing below the agent imports this package: the wiring (app/launch.py) adds the tool and attaches it
to the agent it built.
"""
