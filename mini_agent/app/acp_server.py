"""`mini-agent acp`: an Agent Client Protocol server on stdio, for editors (Zed and others) to drive the agent.

The official SDK (`agent-client-protocol`, imported as `acp`, only in this mode) speaks JSON-RPC on the
protocol's private streams (acp_runner.take_stdio) on a thread of its own; sessions are built and their turns
run on the main thread (acp_runner.py, acp_session.py). Updates go out in order through one queue, and a
prompt's response is sent only after every update of its turn. A permission question waits for the editor's
answer; `session/cancel` interrupts the turn the way Ctrl-C does.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.core import AgentSideConnection
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from mini_agent import __version__, threads
from mini_agent.app.acp_permissions import decision_for, options_for, question_for
from mini_agent.app.acp_runner import MainThreadRunner, ProtocolStreams, take_stdio
from mini_agent.app.acp_session import AcpSession, editor_servers, open_session
from mini_agent.app.acp_updates import UpdateMapper, diff_of, history_updates, kind_of, title_of
from mini_agent.errors import ExitStatus, MiniAgentError
from mini_agent.safety.permissions import Deny
from mini_agent.settings import PERMISSION_MODES, Settings

MODES = {
    "default": "Asks before edits and commands the policy does not allow",
    "accept-edits": "Edits in the project without asking; commands as in default",
    "plan": "Reads and plans; changes nothing",
    "auto": "Runs what the OS sandbox confines without asking",
    "bypass": "Runs every call without asking (--dangerously-skip-permissions)",
}
LIMIT = 50 * 1024 * 1024
"""Bytes one protocol line may hold (the SDK's default): an image or a file an editor embeds."""

log = logging.getLogger("mini_agent.acp")


class AcpAgent:
    """The protocol's agent side: the editor's requests, answered on the protocol's loop."""

    def __init__(self, runner: MainThreadRunner, settings_for: Callable[[Path], Settings]) -> None:
        self.runner, self.settings_for = runner, settings_for
        self.sessions: dict[str, AcpSession] = {}
        self.conn: AgentSideConnection | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.outbox: asyncio.Queue | None = None
        self._queued: dict[str, Future] = {}
        """A prompt waiting for the main thread, by session: a cancel before it starts cancels it."""

    def on_connect(self, conn: AgentSideConnection) -> None:
        self.conn = conn

    # ---- the protocol's methods ------------------------------------------------------------------------------

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            agent_info=Implementation(name="mini-agent", title="mini-agent", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        return AuthenticateResponse()  # the endpoint's key comes from the environment or config, as for the CLI

    async def new_session(self, cwd: str, mcp_servers: list | None = None, **_: Any) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers, None)
        return NewSessionResponse(session_id=session.id, modes=_modes(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list | None = None, **_: Any):
        session = await self._open(cwd, mcp_servers, session_id)
        agent = session.agent
        for update in history_updates(agent.session.messages, agent.registry.get, session.settings.cwd):
            self._send(session.id, update)
        await self.outbox.join()
        return LoadSessionResponse(modes=_modes(session))

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in PERMISSION_MODES and mode_id != session.settings.permission_mode:
            raise RequestError.invalid_params({"message": f"No mode {mode_id!r}; use one of {list(PERMISSION_MODES)}."})
        session.agent.set_mode(mode_id)
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        if session_id in self._queued:
            raise RequestError.invalid_request({"message": "A prompt of this session is still running."})
        session.cancel_requested = False
        job = self.runner.submit(lambda: session.turn(prompt, self.runner.interruptible))
        self._queued[session_id] = job
        try:
            stop = await asyncio.wrap_future(job)
        except asyncio.CancelledError:
            if not job.cancelled():
                raise
            stop = "cancelled"  # cancelled before it started
        except MiniAgentError as exc:
            message = session.settings.secret_set.mask(str(exc))
            await self.outbox.join()
            raise RequestError.internal_error({"message": message}) from None
        finally:
            self._queued.pop(session_id, None)
        await self.outbox.join()  # every update of the turn reaches the editor before its end does
        return PromptResponse(stop_reason=stop)

    async def cancel(self, session_id: str, **_: Any) -> None:
        session, job = self.sessions.get(session_id), self._queued.get(session_id)
        if session is None or job is None:
            return
        session.cancel_requested = True  # seen by a turn about to begin; one under way is interrupted
        if not self.runner.interrupt(session_id):
            job.cancel()

    # ---- plumbing ------------------------------------------------------------------------------------------

    async def _open(self, cwd: str, servers: list | None, resume: str | None) -> AcpSession:
        if not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"message": f"cwd must be an absolute path, not {cwd!r}."})
        editors = editor_servers(servers)
        held = self.sessions.get(resume) if resume is not None else None
        if held is not None and resume in self._queued:
            raise RequestError.invalid_request({"message": "A prompt of this session is still running."})

        def build() -> AcpSession:
            if held is not None:  # loaded again (the editor reopened it): its file is closed and read anew
                self.sessions.pop(held.id, None)
                held.close()
            settings = self.settings_for(Path(cwd))
            return open_session(settings, editors, resume, self._send_threadsafe, self._ask)

        try:
            session = await asyncio.wrap_future(self.runner.submit(build))
        except MiniAgentError as exc:
            raise RequestError.internal_error({"message": str(exc)}) from None
        self.sessions[session.id] = session
        return session

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"No session {session_id!r}."})
        return session

    def _send(self, session_id: str, update: Any) -> None:
        self.outbox.put_nowait((session_id, update))

    def _send_threadsafe(self, session_id: str, update: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(self._send, session_id, update)
        except RuntimeError:  # the loop is closed: the editor went away, and the turn is ending
            pass

    async def _deliver(self) -> None:
        """The one sender of updates: in the order they were made."""
        while True:
            session_id, update = await self.outbox.get()
            try:
                await self.conn.session_update(session_id, update)
            except Exception as exc:  # the editor went away: the turn goes on, and ends on its own
                log.debug("update not delivered: %s", exc)
            finally:
                self.outbox.task_done()

    def _ask(self, session_id: str, mapper: UpdateMapper, request) -> Any:
        """On the main thread: the editor's answer to a permission question (a Ctrl-C-like cancel interrupts it)."""
        tool, arguments = request.tool, request.arguments  # arguments with known secrets masked (gate.py)
        call_id = mapper.pending_call(tool.name, arguments) or f"ask-{id(request)}"
        title, kind, diff = title_of(tool.name, arguments, tool), kind_of(tool), diff_of(arguments, tool, mapper.cwd)
        question = question_for(request, call_id, title, kind, diff)

        async def ask():
            await self.outbox.join()  # the editor has the call before the question about it
            return await self.conn.request_permission(session_id, question, options_for(request))

        future = None
        try:
            future = asyncio.run_coroutine_threadsafe(ask(), self.loop)
            response = future.result()
        except BaseException as exc:
            if future is not None:
                future.cancel()
            if isinstance(exc, Exception):  # the editor is gone or answered with an error: no yes was given
                return Deny(f"The editor gave no answer ({exc}); {tool.name} was not run.", stop_turn=True)
            raise
        return decision_for(response.outcome, request)

    async def listen(self, streams: ProtocolStreams) -> None:
        self.loop = asyncio.get_running_loop()
        self.outbox = asyncio.Queue()
        reader = asyncio.StreamReader(limit=LIMIT)
        await self.loop.connect_read_pipe(  # the files own the descriptors from here on
            lambda: asyncio.StreamReaderProtocol(reader), open(streams.incoming, "rb", buffering=0)
        )
        transport, protocol = await self.loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, open(streams.outgoing, "wb", buffering=0)
        )
        writer = asyncio.StreamWriter(transport, protocol, None, self.loop)
        sender = asyncio.ensure_future(self._deliver())
        connection = AgentSideConnection(self, writer, reader, listening=False)
        try:
            await connection.listen()
        finally:
            sender.cancel()
            for session_id in list(self.sessions):
                self.runner.interrupt(session_id)
            self.runner.stop()


def _modes(session: AcpSession) -> SessionModeState:
    current = session.agent.mode
    shown = [*PERMISSION_MODES, *(() if current in PERMISSION_MODES else (current,))]
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=mode, name=mode, description=MODES.get(mode)) for mode in shown],
    )


def _protocol(agent: AcpAgent, streams: ProtocolStreams) -> None:
    try:
        asyncio.run(agent.listen(streams))
    except Exception:
        log.exception("the protocol's loop failed")
    finally:
        agent.runner.stop()  # the editor closed the connection (or it broke): the process ends


def serve(settings_for: Callable[[Path], Settings]) -> ExitStatus:
    """Answer the editor on stdin/stdout until it closes them; logs go to stderr."""
    streams = take_stdio()
    runner = MainThreadRunner()
    agent = AcpAgent(runner, settings_for)
    thread = threads.new(_protocol, agent, streams, name="acp")
    thread.start()
    try:
        runner.serve()
    finally:
        for session in agent.sessions.values():
            session.close()
    return ExitStatus.SUCCESS
