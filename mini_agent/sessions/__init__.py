"""Persistent sessions: one JSONL file per session, listed per project, loaded and continued (--continue,
--resume). `journal` writes and reads one file, `store` finds files, `resume` puts a loaded session back into
an agent, `rewind` reads the conversation a rewound log stands on, `fork` copies a session into a new file.

May import: conversation, model (messages), usage, context, tools, safety, files (fork's temporary file), the
agent (to resume into it). Never ui/, app/ or cli.

`resume` is imported where it is used (`from mini_agent.sessions.resume import resume_into`): `--continue` loads
the session before the REPL's first prompt (its recap is shown) and puts it into the agent behind the prompt,
so what that step needs (the context machinery) does not delay the prompt."""

from mini_agent.sessions.journal import SessionBusy, SessionChanged, SessionWriter
from mini_agent.sessions.store import LoadedSession, SessionInfo, SessionNotFound, SessionStore, project_key

__all__ = [
    "LoadedSession",
    "SessionBusy",
    "SessionChanged",
    "SessionInfo",
    "SessionNotFound",
    "SessionStore",
    "SessionWriter",
    "project_key",
]
