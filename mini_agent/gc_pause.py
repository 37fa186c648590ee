"""Python's cyclic garbage collector, paused while the command starts and during bursts of short-lived objects.

Starting means importing: the SDK alone makes ~170,000 objects, and the collector walks the growing heap again and
again as they pile up, ~5 % of a cold start's instructions (the SDK's import: 4.82 G with it, 4.57 G without).
Next to none of it is garbage (~2,000 objects by the first request). So the installed command pauses the collector
first thing (entry.py) and resumes it once started: when the first model request is out (step_preload.py), when
the REPL's agent is built behind its prompt, when the warm server has preloaded. Resuming freezes what start-up
made (`gc.freeze`): the modules, classes and functions live as long as the process, and no later collection walks
them again (a full collection of them costs ~0.1 s, which would otherwise land in some step's gap). The little
garbage of start-up stays frozen with them.

The same holds for one burst of work that makes many short-lived objects without cycles: rendering a batch of
Markdown builds ~90 parser tokens per KB and the styled text laid out from them, and the collections they trigger
walk the tokens still in use again and again (~15 % of the time a 1 MB reply takes to render). `held()` keeps the
collector off for such a burst; reference counting frees its garbage as it goes, and what cycles it left are
collected by the next collection after it.

A leaf: imports nothing of mini-agent's. Where nothing paused it (tests run the CLI in process), resuming does
nothing.
"""

from __future__ import annotations

import gc

_paused = False


def pause() -> None:
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume() -> None:
    """Collect again, with what start-up made frozen; a no-op unless `pause` turned the collector off. Safe from
    any thread, at any time: two threads resuming at once freeze and enable twice, which changes nothing."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


def paused() -> bool:
    return _paused


class held:
    """`with held():` the collector stays off for the block, and is on after it if it was before. Where another
    thread turns it back on meanwhile, the block just collects as usual: only its speed depends on the pause."""

    __slots__ = ("_was_on",)

    def __enter__(self) -> None:
        self._was_on = gc.isenabled()
        if self._was_on:
            gc.disable()

    def __exit__(self, *exc_info: object) -> None:
        if self._was_on:
            gc.enable()
