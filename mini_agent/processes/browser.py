"""The human's web browser on a page (an OAuth login's), chosen by the standard library's `webbrowser` ($BROWSER,
xdg-open, ...) and started like the agent's other children: without the agent's own credentials in its
environment, in a session of its own (it outlives the agent, as a browser should), its output discarded."""

from __future__ import annotations

import subprocess
from typing import Any

from mini_agent import threads
from mini_agent.processes.run import child_environment


def open_page(url: str, browser: Any = None) -> bool:
    """Open an http(s) `url`; False when it is not one or no browser could be started. `browser`: a
    `webbrowser` controller (default: `webbrowser.get()`)."""
    if not url.startswith(("https://", "http://")):
        return False
    import webbrowser

    try:
        browser = browser or webbrowser.get()
    except webbrowser.Error:
        return False
    if not isinstance(browser, webbrowser.GenericBrowser):  # macOS and Windows: an OS call, not our child
        return browser.open(url)
    command = [browser.name, *(argument.replace("%s", url) for argument in browser.args)]
    try:
        subprocess.Popen(
            command,
            env=child_environment(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            start_new_session=True,
            preexec_fn=threads.child_preexec(),  # opened from a background thread: a browser takes SIGTERM
        )
    except OSError:
        return False
    return True
