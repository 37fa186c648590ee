"""Background jobs: commands that keep running after the bash call that started them, until they end, are stopped,
or the session ends (`JobTable`, one per session).

A job is started like any command (its argv, environment and confinement come from the bash tool, decided by the
same policy), in a process group of its own, watched by the watchdog (it dies with the agent, kill -9 included)
and marked with a token of its own in its environment (`MINI_AGENT_JOB`), which finds what left its group with
`setsid` or a double fork when the job is stopped. Its stdout and stderr are one pipe that a thread of the agent
copies into a capped spool (spool.py) in a private directory under the agent's data dir, which no sandboxed
command can see. A job is its process tree: when its command exits, whatever it left running is killed with it.

Jobs are spawned from one long-lived thread (spawner.py): bubblewrap's --die-with-parent fires when the *thread*
that forked it ends, and a tool may run on a worker thread.

Standard library only.
"""

from __future__ import annotations

import atexit
import os
import secrets
import selectors
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mini_agent import threads
from mini_agent.processes import listeners
from mini_agent.processes.spawner import Spawner
from mini_agent.processes.spool import SPOOL_CAP, Chunk, Spool, private_directory
from mini_agent.processes.tree import KILL_GRACE, Lineage
from mini_agent.processes.watchdog import carriers, kill_carriers, watchdog

if TYPE_CHECKING:
    from mini_agent.safety.sandbox import Launch

JOB_VARIABLE = "MINI_AGENT_JOB"
READ_SIZE = 1 << 16
POLL_INTERVAL = 0.1
"""How often a job's thread looks whether its command exited while the pipe stays silent."""
DRAIN_AFTER_EXIT = 0.2
STOP_WAIT = 10.0
"""How long `stop` waits for a killed job's thread to record its end."""

Confine = Callable[[list[str], dict[str, str]], "Launch | None"]
"""From the job's argv and environment to its confined launch (None: unconfined); raises to refuse."""


@dataclass
class Job:
    """One background job. `returncode` is None while it runs."""

    id: str
    command: str
    sandbox: str
    """The sandbox level it runs in, or "none"."""
    spool: Spool
    token: str
    started: float = field(default_factory=time.time)
    process: subprocess.Popen | None = None
    returncode: int | None = None
    ended: float | None = None
    stopped_by: str | None = None
    """"the model", "the user" or "the session's end", when one of them stopped it."""
    warnings: list[str] = field(default_factory=list)
    """What the sandbox could not keep from it (protected files changed, git control files put back)."""
    read_offset: int = 0
    seen: int = 0
    """How far the last read looked (beyond `read_offset` when it left a partial line for the next)."""
    reported: bool = False
    """Its end was told to the model (stop_job's result, or a note at the next step)."""
    done: threading.Event = field(default_factory=threading.Event)
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _lineage: Lineage | None = None
    _launch: Launch | None = None

    @property
    def running(self) -> bool:
        return self.returncode is None

    def wait_for_output(self, timeout: float) -> None:
        """Return when the job printed something or ended, or after `timeout` seconds."""
        with self._changed:
            if self.running and self.spool.end == self.seen:
                self._changed.wait(timeout)

    def changed(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def pids(self) -> set[int]:
        """The processes of the job now: its tree, and whatever carries its token after leaving it."""
        if self.process is None or not self.running:
            return set()
        return set(listeners.descendants(self.process.pid)) | set(carriers(JOB_VARIABLE, self.token))


class UnknownJob(KeyError):
    """No job of this session has that id."""


class JobTable:
    """The session's background jobs. `spool_root`: where the private spool directory goes (the data dir)."""

    def __init__(self, spool_root: Path | None = None, spool_cap: int = SPOOL_CAP) -> None:
        self._root, self.spool_cap = spool_root, spool_cap
        self._dir: Path | None = None
        self._jobs: dict[str, Job] = {}
        self._lock = threading.Lock()
        self._spawner: Spawner | None = None

    # ---- starting -------------------------------------------------------------------------------------------

    def start(
        self, command: str, argv: list[str], env: dict[str, str], cwd: Path, confine: Confine | None, level: str
    ) -> Job:
        """Start `argv` as a job; `confine` turns it into its confined launch (at sandbox `level`, or "none").
        Returns at once, the job running."""
        guard = watchdog()
        token = secrets.token_hex(16)
        env = {**env, **guard.environment(), JOB_VARIABLE: token}
        launch = confine(argv, env) if confine is not None else None
        with self._lock:
            job_id = self._new_id()
            spool = Spool(self._spool_dir() / f"{job_id}.out", self.spool_cap)
        job = Job(job_id, command, level if launch is not None else "none", spool, token, _launch=launch)
        try:
            self._spawn(job, launch.argv if launch else argv, launch.env if launch else env, cwd)
        except BaseException:
            spool.close()
            if launch is not None:
                launch.cleanup()
            raise
        guard.watch(job.process.pid)  # type: ignore[union-attr]  # from here on it dies with the agent
        with self._lock:
            self._jobs[job_id] = job
        threads.start(self._pump, job, name=f"job-{job_id}")
        _LIVE.add(self)
        return job

    def _new_id(self) -> str:
        while True:  # short enough to type in /jobs, not a counter another session's text could predict
            job_id = secrets.token_hex(2)
            if job_id not in self._jobs and not job_id.isdigit():
                return job_id

    def _spool_dir(self) -> Path:
        if self._dir is None:
            self._dir = private_directory(self._root)
        return self._dir

    def _spawn(self, job: Job, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        launch = job._launch
        lineage = Lineage(launch.contained if launch is not None else False)

        def spawn() -> subprocess.Popen:
            return lineage.spawn(
                argv,
                launch.preexec_fn if launch is not None else None,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                pass_fds=launch.pass_fds if launch is not None else (),
            )

        if self._spawner is None:
            self._spawner = Spawner()
        try:
            job.process = self._spawner.run(spawn)
        except BaseException:
            lineage.close()
            raise
        job._lineage = lineage

    def _pump(self, job: Job) -> None:
        """Copy the job's output into its spool until its command exits, then end what it left behind."""
        process = job.process
        assert process is not None and process.stdout is not None
        fd = process.stdout.fileno()
        returncode = None
        try:
            with selectors.DefaultSelector() as selector:
                selector.register(fd, selectors.EVENT_READ)
                while process.poll() is None:
                    if selector.select(POLL_INTERVAL):
                        if not _copy(fd, job.spool):
                            break
                        job.changed()
                returncode = process.wait()
                self._end_tree(job, grace=0)
                deadline = time.monotonic() + DRAIN_AFTER_EXIT
                while (left := deadline - time.monotonic()) > 0 and selector.select(left) and _copy(fd, job.spool):
                    pass
        finally:
            process.stdout.close()
            try:
                self._settle(job)
            finally:
                job.returncode = returncode if returncode is not None else process.poll() or -1
                job.ended = time.time()
                job.done.set()
                job.changed()

    def _settle(self, job: Job) -> None:
        launch, job._launch = job._launch, None
        if launch is not None:
            changed = launch.protected_changes()
            if changed:
                shown = ", ".join(str(path) for path in changed)
                job.warnings.append(f"it changed protected files the sandbox could not keep read-only: {shown}")
            git = launch.git_changes()
            if git:
                job.warnings.append(git.notice())
            launch.cleanup()
        if job._lineage is not None:
            job._lineage.close()

    def _end_tree(self, job: Job, grace: float) -> None:
        if job._lineage is not None:
            job._lineage.kill(grace)
        kill_carriers(JOB_VARIABLE, job.token)  # what left the group (setsid, double fork) but kept the token

    # ---- using ----------------------------------------------------------------------------------------------

    def get(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id.strip())
        if job is None:
            raise UnknownJob(job_id)
        return job

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def read(self, job: Job, limit: int | None = None) -> Chunk:
        """The job's output since the last read (the cursor moves past it)."""
        chunk = job.spool.read(job.read_offset, limit or self.spool_cap)
        job.read_offset = job.seen = chunk.end
        return chunk

    def stop(self, job: Job, by: str, grace: float = KILL_GRACE) -> Job:
        """Kill the job's whole process tree (SIGTERM, SIGKILL after `grace`) and wait until its end is recorded."""
        if job.running:
            job.stopped_by = job.stopped_by or by
            job.reported = job.reported or by == "the model"  # its result says so
            self._end_tree(job, grace)
            job.done.wait(STOP_WAIT)
        return job

    def stop_all(self, grace: float = KILL_GRACE) -> None:
        """The session's end: every job stopped, the spool directory removed."""
        running = [job for job in self.jobs() if job.running]
        for job in running:
            job.stopped_by = job.stopped_by or "the session's end"
            if job._lineage is not None and job._lineage.process is not None:
                try:
                    os.killpg(job._lineage.process.pid, 15)  # all of them told at once, then each waited for
                except OSError:
                    pass
        for job in running:
            self.stop(job, "the session's end", grace)
        for job in self.jobs():
            job.spool.close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        _LIVE.discard(self)

    def take_endings(self) -> list[Job]:
        """Jobs that ended since the last call and that the model has not heard of (nobody but the user stopped
        them through the model)."""
        ended = []
        for job in self.jobs():
            if not job.running and not job.reported:
                job.reported = True
                ended.append(job)
        return ended

    def serving(self, address: str, port: int) -> Job | None:
        """The running job that alone listens where a connection to (address, port) would go, if one does."""
        for job in self.jobs():
            if job.running and listeners.served_by(address, port, listeners.socket_inodes(job.pids())):
                return job
        return None


def _copy(fd: int, spool: Spool) -> bool:
    """One read from the pipe into the spool; False at end of file."""
    data = os.read(fd, READ_SIZE)
    if data:
        spool.append(data)
    return bool(data)


_LIVE: set[JobTable] = set()
"""Tables with jobs that may still run: stopped when the process ends normally (the watchdog covers the rest)."""


def stop_all() -> None:
    for table in list(_LIVE):
        table.stop_all()


atexit.register(stop_all)
