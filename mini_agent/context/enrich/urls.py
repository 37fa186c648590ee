"""URLs in the user's message, listed cleanly so the model can hand them to web_fetch as they are.

A URL typed at the end of a sentence or inside parentheses carries punctuation that is not part of it; this
takes it off (a `)` only when unbalanced, so `.../Foo_(bar)` keeps its own). URLs in backticks are quoted
code, not something to fetch.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from mini_agent.context.blocks import P2, ContextBlock, Enricher, Skip, TurnInput
from mini_agent.context.enrich.mentions import without_code
from mini_agent.xmltext import escape

# A URL ends at whitespace, quotes, angle brackets, or full-width punctuation (Chinese text has no spaces).
_URL = re.compile(r"(?<![A-Za-z0-9])https?://[^\s<>\"'`，。；：！？、（）【】《》「」『』]+", re.IGNORECASE)
_TRAILING = ".,;:!?*"
_CLOSERS = {")": "(", "]": "[", "}": "{"}


def find_urls(text: str) -> list[str]:
    """The http(s) URLs outside backticks, trailing punctuation removed, each once, in order."""
    found = (_strip_trailing(match.group()) for match in _URL.finditer(without_code(text)))
    return list(dict.fromkeys(url for url in found if _has_host(url)))


def _strip_trailing(url: str) -> str:
    while url:
        last = url[-1]
        if last in _TRAILING or (last in _CLOSERS and url.count(last) > url.count(_CLOSERS[last])):
            url = url[:-1]
        else:
            break
    return url


def _has_host(url: str) -> bool:
    try:
        return bool(urlsplit(url).hostname)
    except ValueError:  # e.g. an unbalanced `[` where an IPv6 address would go
        return False


def enrich_urls(inp: TurnInput) -> list[ContextBlock]:
    urls = find_urls(inp.text)
    if not urls:
        raise Skip("no URLs")
    text = "\n".join(["URLs in the message (web_fetch can read them):", *(escape(url) for url in urls)])
    return [ContextBlock("urls", P2, text)]


urls = Enricher("urls", enrich_urls, inline=True)
