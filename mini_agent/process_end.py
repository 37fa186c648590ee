"""End the process the way the interpreter would, without the interpreter's teardown.

Exit status from `SystemExit`, non-daemon threads waited for, atexit handlers run, stdout and stderr flushed,
death by SIGINT after an uncaught Ctrl-C: everything a caller can see. What is skipped is the finalisation of
every module and object, which with the model SDK loaded costs tens of milliseconds after the answer is out.
Every way of running a command ends here: the warm worker (it must never return into the server), the normal
path of the installed command (entry.py) and `python -m mini_agent`.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import NoReturn


def run_and_exit(main: Callable[[], object]) -> NoReturn:
    """Run `main` to the end as the interpreter runs a script, then leave."""
    status = 0
    interrupted = False
    try:
        main()
    except SystemExit as exc:
        status = exit_status(exc.code)
    except KeyboardInterrupt:
        sys.excepthook(*sys.exc_info())
        interrupted = True
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    status = _finish(status)
    if interrupted:  # as CPython does since 3.8: die of SIGINT, so a calling shell sees the interrupt
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    os._exit(status)


def exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish(status: int) -> int:
    """What the interpreter does on the way out: wait for non-daemon threads, atexit handlers, flush."""
    try:
        threading._shutdown()  # type: ignore[attr-defined]
    except Exception:
        pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            if stream is sys.stdout:
                status = 120  # the interpreter's code when flushing stdout fails at exit
    return status
