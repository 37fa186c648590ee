"""A session's life outside the loop: its file (new, continued or resumed), /clear, and undo by turn.

The session file gets every log entry as it happens; undo checkpoints are logged beside them, so `/undo`
still works on turns from before a `--continue`.
"""

from __future__ import annotations

import threading
from pathlib import Path

from mini_agent.app.session_hooks import SessionHooks
from mini_agent.settings import Settings
from mini_agent.ui.terminal_text import visible
from mini_agent.xmltext import system_hint

CHECKPOINT, UNDONE, SHELL = "checkpoint", "undone", "shell"
"""SHELL: a `!command` the user ran in the REPL (app/shell_escape.py), which an undo checkpoint may follow."""
CHANGING, UNCHANGED = "changing", "unchanged"
"""A turn's before-snapshot, logged before its first change; and the end of such a turn that left no checkpoint.
A `changing` entry the log does not close was cut short by a kill: `settle_interrupted_turn` records it."""


class SessionLifecycle:
    def __init__(self, settings: Settings, resume: str | None = None, undo: bool = True, fork: bool = False) -> None:
        """`resume`: None for a new session, "" for this directory's latest, else an id (or id prefix). `fork`:
        continue a copy of that session in a new file (--fork-session), leaving its own file as it is."""
        self.settings = settings
        self._store = None
        self._store_lock = threading.Lock()
        self.resume_target = resume
        self.with_undo = undo
        self.fork_on_load = fork
        self.forked_from = ""
        """The session this one was forked from in this run (--fork-session, /fork); "" if none."""
        self.writer = None
        self.writer_id = ""
        """The id of the session file in use (kept after closing, for the json output)."""
        self.writer_path = ""
        """The path of the session file in use, likewise kept (for the hooks that run at the session's end)."""
        self.notice: str | None = None
        self.undo = _NoUndo()
        self._warned = False
        self._changing = False
        """This turn logged its before-snapshot (a `changing` entry), so its end is logged too."""
        self._opened = False
        self._loaded = None
        """The session `open` read for --continue / --resume, until `attach` gives it to the agent."""
        self.hooks = SessionHooks()
        """SessionStart and SessionEnd (app/session_hooks.py)."""

    @property
    def store(self):
        """The session files' store, made on first use: a new REPL session needs none before its prompt (the
        sessions package is ~15 ms of imports), only the agent's build behind it."""
        with self._store_lock:
            if self._store is None:
                from mini_agent.sessions import SessionStore

                self._store = SessionStore(self.settings.data_dir, self.settings.secret_set)
            return self._store

    @property
    def session_id(self) -> str:
        """The id of the session file in use, or of the last one closed; "" before there is one."""
        return self.writer.id if self.writer is not None else self.writer_id

    @property
    def transcript_path(self) -> str:
        """The path of the session file in use, or of the last one closed; "" before there is one."""
        return str(self.writer.path) if self.writer is not None else self.writer_path

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
        source = "startup" if self._loaded is None else "resume"
        if self._loaded is not None:
            checkpoints, self._loaded = self._bind(agent, self._loaded), None
        if self.writer is None:
            self._new_file(agent)
        self._start_undo(agent, checkpoints)
        self.hooks.started(agent, source)

    def start_new(self, agent) -> None:
        """/clear: a new conversation in a new file; the old one stays on disk for --resume."""
        from mini_agent.conversation import Session  # here: the REPL imports this module before its first prompt

        self.hooks.ended("clear")
        self.close()
        agent.start_conversation(Session())
        self._new_file(agent)
        self._start_undo(agent, [])
        self.hooks.started(agent, "clear")

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
        self.hooks.ended("resume")
        self.close()
        checkpoints = self._bind(agent, self._load(target))
        self._start_undo(agent, checkpoints)
        self.hooks.started(agent, "resume")
        return self.notice

    def fork(self, agent) -> str:
        """/fork: go on in a new session holding this one's log; this one's file stays as it is. The agent's
        conversation is unchanged (it is what the copy holds), and so is the undo stack (shared: see
        sessions/fork.py)."""
        if self.writer is None or (self.writer.error is None and not self.writer.path.exists()):
            return "Nothing to fork yet: this session has no turn."
        self.writer.sync()
        original = self.current()
        forked = self.store.fork(original, self.settings.cwd, agent.settings.model)
        writer = self.store.reopen(forked)
        self.close()
        self.writer, self.forked_from = writer, original.info.id
        agent.session.attach(writer.write)
        return f"Forked session {original.info.id} into {forked.info.id}; continuing in {forked.info.id}."

    def current(self):
        """The session file in use, read as a resume would read it now; MiniAgentError when it no longer holds
        the conversation (a write failed: the conversation in memory is ahead of it) or cannot be read."""
        from mini_agent.errors import MiniAgentError

        path = self.writer.path
        if self.writer.error is not None:
            why = self.writer.error.strerror or self.writer.error
            raise MiniAgentError(
                f"The session file {path} stopped being written ({why}): it no longer holds this conversation, "
                "which rewinding and forking start from."
            )
        try:
            return self.store.load(path, self.settings.cwd)
        except OSError as error:
            raise MiniAgentError(f"The session file {path} cannot be read: {error.strerror or error}.") from None

    def rebuild(self, agent, loaded) -> None:
        """The agent continues `loaded` (the file in use, read again) as a new process resuming it would: what
        the agent kept in memory of the conversation is forgotten first. The undo stack is left as it is."""
        agent.forget()
        self._continue(agent, loaded)

    def end(self, reason: str, quiet: bool = False) -> None:
        """The process leaves the session: its SessionEnd hooks run (once), then the file is closed."""
        if self.writer is not None:
            self.writer.sync()  # a hook may read the transcript
        self.hooks.ended(reason, quiet)
        if not quiet:  # from a signal handler the process dies next: the file is left as a kill would leave it
            self.close()

    def close(self) -> None:
        if self.writer is not None:
            self.writer_id, self.writer_path = self.writer.id, str(self.writer.path)
            self.writer.close()
            self.writer = None

    def after_turn(self) -> str | None:
        """Make the turn durable and log an undo checkpoint for it; a warning, once, if the file stopped."""
        checkpoint = self.undo.end_turn()
        changing, self._changing = self._changing, False
        if self.writer is None:
            return None
        if checkpoint is not None:
            self.writer.write({"type": CHECKPOINT, "before": checkpoint.before, "after": checkpoint.after})
        elif changing:
            self.writer.write({"type": UNCHANGED})
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
        from mini_agent.sessions.recap import last_exchanges, recap_lines, todo_line

        loaded = self.store.load(target, self.settings.cwd)
        forked = ""
        if self.fork_on_load:  # the original is only read: it may even be open in another process
            forked, loaded = loaded.info.id, self.store.fork(loaded, self.settings.cwd, self.settings.model)
            self.forked_from, self.fork_on_load = forked, False
        self.writer = self.store.reopen(loaded)
        info = loaded.info
        self.notice = (
            f"Continuing session {info.id} from {info.modified:%Y-%m-%d %H:%M} "
            f"({info.messages} messages): {info.first_prompt}"
        )
        if forked:
            self.notice = f"Forked session {forked} into {info.id} (the original is unchanged).\n" + self.notice
        recap = recap_lines(last_exchanges(loaded.entries))
        recap += [line for line in (todo_line(loaded.entries),) if line]
        if recap:
            self.notice += "\n" + "\n".join(recap)
        if loaded.damaged:
            self.notice += f"\nThe session file was damaged: {loaded.damaged}"
        return loaded

    def _bind(self, agent, loaded) -> list:
        """The agent continues a loaded session; the undo checkpoints its log describes, a turn a kill cut short
        included."""
        self._continue(agent, loaded)
        checkpoints = checkpoints_in(loaded.journal.entries)
        if self.with_undo and self.writer is not None:
            from mini_agent.undo import project_snapshots

            snapshots = project_snapshots(self.settings.data_dir, Path(self.settings.cwd))
            settled = settle_interrupted_turn(loaded.journal.entries, snapshots, self.writer)
            checkpoints += [settled] if settled is not None else []
        return checkpoints

    def _continue(self, agent, loaded) -> None:
        from mini_agent.sessions.resume import resume_into

        resume_into(agent, loaded, self.writer)
        # Undo bookkeeping is read from the whole file: turns of a rewound branch changed files all the same.
        pending = undo_notices_pending(loaded.journal.entries)
        agent.tell_next_turn(*(system_hint("undo", notice) for notice in pending))

    def _new_file(self, agent) -> None:
        self.writer = self.store.create(self.settings.cwd, agent.settings.model)
        agent.session.attach(self.writer.write)

    def _start_undo(self, agent, checkpoints: list) -> None:
        if not self.with_undo:
            return
        from mini_agent.step_preload import PRELOAD
        from mini_agent.undo import UndoStack, project_snapshots

        first = isinstance(self.undo, _NoUndo)
        self.undo = UndoStack(project_snapshots(self.settings.data_dir, Path(self.settings.cwd)), checkpoints)
        if first:  # the first snapshot of a project (a new store: ~10 git processes) is taken during the first
            PRELOAD.also(lambda: self.undo.prepare())  # request, not in the first write or exec call's gap

    def before_change(self) -> None:
        """The agent's `before_change` (given it when built): the snapshot of the undo stack of the session in
        use, which /clear and /resume replace."""
        before = self.undo.before_change()
        if before is not None and self.writer is not None:
            self.writer.write({"type": CHANGING, "before": before})
            self._changing = True


def settle_interrupted_turn(entries: list[dict], snapshots, writer):
    """A turn killed after it began changing files (kill -9, a crash) never logged its checkpoint: log it now,
    from its before-snapshot to the files as they are now, so it can be undone. The checkpoint, or None when
    there is no such turn (or it changed nothing, or no snapshot can be taken now: then the next load tries)."""
    from mini_agent.undo import Checkpoint, SnapshotError

    before = None
    for entry in entries:
        if entry.get("type") == CHANGING:
            before = entry.get("before") if isinstance(entry.get("before"), str) else None
        elif entry.get("type") in (CHECKPOINT, UNCHANGED):
            before = None
    if before is None:
        return None
    after = snapshots.take()
    if after is None:
        return None
    try:
        changed = bool(snapshots.changes(before, after))
    except SnapshotError:
        changed = True  # an undo that finds nothing to do is better than one that is missing
    if not changed:
        writer.write({"type": UNCHANGED})
        return None
    writer.write({"type": CHECKPOINT, "before": before, "after": after})
    return Checkpoint(before, after)


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
    tell it; a rewind replaces them with its own notice (the turns they were about are taken back)."""
    from mini_agent.sessions.rewind import REWIND

    pending: list[str] = []
    for entry in entries:
        if entry.get("type") == "message":
            pending = []
        elif entry.get("type") == REWIND:
            pending = [entry["notice"]] if isinstance(entry.get("notice"), str) and entry["notice"] else []
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
