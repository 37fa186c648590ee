"""--continue's notice (which session goes on, its last exchanges), printed above the REPL's first prompt.

Reading the session (the sessions package, the file, the recap) took ~17 ms before the first prompt, and drawing
the prompt needs none of it. So `--continue` reads its session behind the prompt, first thing in the agent's
build, and the notice is printed above the prompt as soon as it is read, the way prompt-toolkit prints while a
prompt is up (`run_in_terminal`: the prompt, and whatever is typed in it, is drawn again below). Where the prompt
returned first (a line typed at once), the notice is printed before that line is handled. Either way, once, and
before anything the first line makes. A session that cannot be continued (another process has it open) ends the
REPL with its error as it did before the prompt, the prompt only just drawn. A session named by id (--resume) is
read before the prompt, as a wrong id must stop the start, and its notice goes with the banner.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class ResumedNotice:
    def __init__(self, notice: Callable[[], str | None], show: Callable[[str], None]) -> None:
        """`notice`: the session's notice once read (None: nothing to say); `show` prints it."""
        self._notice, self._show = notice, show
        self._read = threading.Event()
        self._lock = threading.Lock()
        self._shown = False
        self._error: BaseException | None = None
        self._prompt = None

    def above(self, prompt_session) -> None:
        """The prompt to print above while it is up."""
        self._prompt = prompt_session

    def read(self, error: BaseException | None = None) -> None:
        """The session is read, or failed to be (`error`): print its notice above the prompt if one is up, or end
        the prompt with the error. From any thread."""
        self._error = error
        self._read.set()
        app = getattr(self._prompt, "app", None)
        loop = getattr(app, "loop", None)
        if loop is None or not app.is_running:
            return  # no prompt up: `show` prints it, or raises the error
        try:
            loop.call_soon_threadsafe(self._above, app)
        except RuntimeError:  # that prompt has ended and its loop closed: `show` prints it
            pass

    def show(self, wait: bool = True) -> None:
        """Print the notice unless it is printed already; waits until the session is read (without `wait`, does
        nothing before then). A session that could not be read raises its error here."""
        if not wait and not self._read.is_set():
            return
        self._read.wait()
        if self._error is not None:
            raise self._error
        with self._lock:
            if self._shown:
                return
            self._shown = True
        notice = self._notice()
        if notice:
            self._show(notice)

    def _above(self, app) -> None:
        """On the prompt's own loop."""
        from prompt_toolkit.application import run_in_terminal
        from prompt_toolkit.application.current import set_app

        if not app.is_running or app.is_done:
            return
        if self._error is not None:
            app.exit(exception=self._error)  # raised by the prompt, where the REPL's start would have raised it
            return
        with set_app(app):  # a callback from another thread runs outside the prompt's context
            run_in_terminal(self.show)
