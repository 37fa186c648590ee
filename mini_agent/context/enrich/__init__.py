"""Enrichers: read the user's message and add what it points at (files, dates, earlier objects, URLs).

Each enricher lives in its own module and is imported only when the agent asks for the list, so importing
this package stays cheap. May import what context/ may.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mini_agent.context.blocks import Enricher


def default_enrichers() -> list[Enricher]:
    """The built-in enrichers, in the order their blocks appear beside the message."""
    from mini_agent.context.enrich.mentions import mentions
    from mini_agent.context.enrich.references import references
    from mini_agent.context.enrich.timeexpr import time_expressions
    from mini_agent.context.enrich.urls import urls

    return [mentions, time_expressions, references, urls]
