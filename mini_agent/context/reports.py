"""The events the context layer emits: a turn's trace and the images attached to it. In a module of their own so
that a front end drawing them imports only these, not the machinery that makes them (the gatherer, the image
reader), which a REPL needs only once a turn is sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mini_agent.context.images import AttachedImage
    from mini_agent.context.injection import TurnTrace


@dataclass(frozen=True)
class ContextInjected:
    """The event: the context blocks of a turn were gathered and placed; the trace of what was added and why."""

    trace: TurnTrace


@dataclass(frozen=True)
class ImagesAttached:
    """The event: images went into the user's message (or were named and could not)."""

    images: tuple[AttachedImage, ...]
