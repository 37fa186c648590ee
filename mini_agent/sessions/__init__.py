"""Persistent sessions: one JSONL file per session, listed per project, loaded and continued (--continue,
--resume). `journal` writes and reads one file, `store` finds files, `resume` puts a loaded session back into
an agent, `rewind` reads the conversation a rewound log stands on, `fork` copies a session into a new file.

May import: conversation, model (messages), usage, context, tools, safety, files (fork's temporary file), the
agent (to resume into it). Never ui/, app/ or cli."""

from mini_agent.sessions.journal import SessionBusy, SessionChanged, SessionWriter
from mini_agent.sessions.resume import resume_into
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
    "resume_into",
]
