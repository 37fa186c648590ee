"""A session's life outside the loop: its file (new, continued or resumed), /clear, and undo by turn.

The session file gets every log entry as it happens; undo checkpoints are logged beside them, so `/undo`
still works on turns from before a `--continue`.
"""

from __future__ import annotations

from pathlib import Path

from mini_agent.conversation import Session
from mini_agent.settings import Settings
from mini_agent.ui.terminal_text import visible
from mini_agent.xmltext import system_hint

CHECKPOINT, UNDONE, SHELL = "checkpoint", "undone", "shell"
"""SHELL: a `!command` the user ran in the REPL (app/shell_escape.py), which an undo checkpoint may follow."""


class SessionLifecycle:
    def __init__(self, settings: Settings, resume: str | None = None, undo: bool = True) -> None:
        """`resume`: None for a new session, "" for this directory's latest, else an id (or id prefix)."""
        from mini_agent.sessions import SessionStore

        self.settings = settings
        self.store = SessionStore(settings.data_dir, settings.secret_set)
        self.resume_target = resume
        self.with_undo = undo
        self.writer = None
        self.writer_id = ""
        """The id of the session file in use (kept after closing, for the json output)."""
        self.notice: str | None = None
        self.undo = _NoUndo()
        self._warned = False
        self._opened = False
        self._loaded = None
        """The session `open` read for --continue / --resume, until `attach` gives it to the agent."""

    @property
    def session_id(self) -> str:
        """The id of the session file in use, or of the last one closed; "" before there is one."""
        return self.writer.id if self.writer is not None else self.writer_id

    # ---- start, switch, stop --------------------------------------------------------------------------------

    def open(self) -> None:
        """Read the session asked for with --continue / --resume, and say which it is (`notice`). Needs no agent:
        the REPL shows the notice with its first prompt while the agent is still being built."""
        if self._opened:
            return
        self._opened = True
        if self.resume_target is not None:
            info = self.store.latest(self.settings.cwd) if self.resume_target == "" else self.resume_target
            if info is None:
                self.notice = "No earlier session in this directory: starting a new one."
            else:
                self._loaded = self._load(info)

    def attach(self, agent) -> None:
        """Give the agent its session: the one asked for with --continue / --resume, or a new file."""
        self.open()
        checkpoints: list = []
        if self._loaded is not None:
            checkpoints, self._loaded = self._bind(agent, self._loaded), None
        if self.writer is None:
            self._new_file(agent)
        self._start_undo(agent, checkpoints)

    def start_new(self, agent) -> None:
        """/clear: a new conversation in a new file; the old one stays on disk for --resume."""
        self.close()
        agent.start_conversation(Session())
        self._new_file(agent)
        self._start_undo(agent, [])

    def resume(self, agent, wanted: str | None, console) -> str | None:
        """/resume: list this directory's sessions, or continue the one named by id (or its number)."""
        sessions = [info for info in self.store.list(self.settings.cwd) if info.id != getattr(self.writer, "id", "")]
        if not wanted:
            if not sessions:
                return "No other session in this directory."
            for line in listing(sessions):
                console.print(visible(line), highlight=False, markup=False)
            return "Continue one with /resume <number or id>."
        target = sessions[int(wanted) - 1] if wanted.isdigit() and 0 < int(wanted) <= len(sessions) else wanted
        self.close()
        checkpoints = self._bind(agent, self._load(target))
        self._start_undo(agent, checkpoints)
        return self.notice

    def close(self) -> None:
        if self.writer is not None:
            self.writer_id = self.writer.id
            self.writer.close()
            self.writer = None

    def after_turn(self) -> str | None:
        """Make the turn durable and log an undo checkpoint for it; a warning, once, if the file stopped."""
        checkpoint = self.undo.end_turn()
        if self.writer is None:
            return None
        if checkpoint is not None:
            self.writer.write({"type": CHECKPOINT, "before": checkpoint.before, "after": checkpoint.after})
        self.writer.sync()
        if self.writer.error is not None and not self._warned:
            self._warned = True
            why = self.writer.error.strerror or self.writer.error
            return (
                f"The session file {self.writer.path} could not be written ({why}); "
                "this session will not be resumable from here on."
            )
        return None

    def undo_last(self, agent) -> list[str]:
        """/undo: restore what the last turn changed and tell the model at the start of the next turn."""
        from mini_agent.undo import report_lines, undo_notice

        report = self.undo.undo()
        if report.result is not None:
            notice = undo_notice(report)
            if self.writer is not None:
                self.writer.write(undone_entry(report.turns, notice))
            agent.keeper.engine.gatherer.forget()  # the restored files may include AGENTS.md or memory.md
            if notice:
                agent.tell_next_turn(system_hint("undo", notice))
        return report_lines(report)

    # ---- internals ------------------------------------------------------------------------------------------

    def _load(self, target):
        """Read a session and reopen its file for appending; the notice says which it is and how it ended."""
        from mini_agent.sessions.recap import last_exchanges, recap_lines

        loaded = self.store.load(target, self.settings.cwd)
        self.writer = self.store.reopen(loaded)
        info = loaded.info
        self.notice = (
            f"Continuing session {info.id} from {info.modified:%Y-%m-%d %H:%M} "
            f"({info.messages} messages): {info.first_prompt}"
        )
        recap = recap_lines(last_exchanges(loaded.entries))
        if recap:
            self.notice += "\n" + "\n".join(recap)
        if loaded.damaged:
            self.notice += f"\nThe session file was damaged: {loaded.damaged}"
        return loaded

    def _bind(self, agent, loaded) -> list:
        """The agent continues a loaded session; the undo checkpoints its log describes."""
        from mini_agent.sessions import resume_into

        resume_into(agent, loaded, self.writer)
        agent.tell_next_turn(*(system_hint("undo", notice) for notice in undo_notices_pending(loaded.entries)))
        return checkpoints_in(loaded.entries)

    def _new_file(self, agent) -> None:
        self.writer = self.store.create(self.settings.cwd, agent.settings.model)
        agent.session.attach(self.writer.write)

    def _start_undo(self, agent, checkpoints: list) -> None:
        if not self.with_undo:
            return
        from mini_agent.undo import UndoStack, project_snapshots

        self.undo = UndoStack(project_snapshots(self.settings.data_dir, Path(self.settings.cwd)), checkpoints)

    def before_change(self) -> None:
        """The agent's `before_change` (given it when built): the snapshot of the undo stack of the session in
        use, which /clear and /resume replace."""
        self.undo.before_change()


def checkpoints_in(entries: list[dict]) -> list:
    """The undo stack a session's log describes: checkpoints pushed, undos popped."""
    return [checkpoint for checkpoint, _prompt in undoable_turns(entries)]


def undoable_turns(entries: list[dict]) -> list[tuple]:
    """(checkpoint, the words typed for that turn) for each turn the log's undo stack still holds, oldest first."""
    from mini_agent.undo import Checkpoint

    stack: list[tuple] = []
    prompt = ""
    for entry in entries:
        if entry.get("type") == "message" and "typed" in entry:
            prompt = entry["typed"]
        elif entry.get("type") == SHELL:
            prompt = f"!{entry.get('command', '')}"
        elif entry.get("type") == CHECKPOINT:
            stack.append((Checkpoint(entry["before"], entry["after"]), prompt))
        elif entry.get("type") == UNDONE:
            count = entry.get("turns", 1)
            del stack[-(count if isinstance(count, int) and count > 0 else 1) :]
    return stack


def undone_entry(turns: int, notice: str) -> dict:
    """The log's record of an undo: how many turns it popped, and what the model is to be told of it."""
    return {"type": UNDONE, "turns": turns, "notice": notice}


def undo_notices_pending(entries: list[dict]) -> list[str]:
    """What undos since the model last saw a message (`mini-agent undo`, or /undo just before quitting) left to
    tell it."""
    pending: list[str] = []
    for entry in entries:
        if entry.get("type") == "message":
            pending = []
        elif entry.get("type") == UNDONE and entry.get("notice"):
            pending.append(entry["notice"])
    return pending


def listing(sessions) -> list[str]:
    from mini_agent.sessions.recap import stop_label

    return [
        f"{number:>3}. {info.modified:%Y-%m-%d %H:%M}  {info.id}  {info.messages:>4} msgs  "
        f"{info.bytes / 1024:>7.1f} KiB  {stop_label(info.stopped) + ' ' if info.stopped else ''}{info.first_prompt}"
        for number, info in enumerate(sessions, 1)
    ]


class _NoUndo:
    """Undo switched off (one-shot runs): every call is a no-op."""

    def before_change(self) -> None:
        pass

    def begin_turn(self) -> None:
        pass

    def end_turn(self) -> None:
        return None

    def undo(self):
        from mini_agent.undo import UndoReport

        return UndoReport(problem="Undo is not available in this run.")
