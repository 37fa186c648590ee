"""What a model's tokens cost: list prices per million tokens, and the cost of a Usage.

Prices as of 2026-11-27, from the providers' pricing pages (Anthropic: base input, 5-minute cache writes, cache
hits, output, from each model's overview page; DeepSeek (api-docs.deepseek.com/quick_start/pricing): cache miss,
cache hit, output of the V4 models, where a cache write costs what a miss does; the retired `deepseek-chat` and
`deepseek-reasoner` were aliases of V4 Flash and are priced as it). They are list prices: batch discounts, Sonnet
4/4.5's long-context rates above 200k input tokens and 1-hour cache writes are not modelled, so a figure is an
estimate, not an invoice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mini_agent.usage import Usage


@dataclass(frozen=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float
    """Writing the prompt cache with the default 5-minute lifetime."""
    cache_read: float


OPUS_4 = Price(input=15.0, output=75.0, cache_write=18.75, cache_read=1.50)
OPUS_4_5 = Price(input=5.0, output=25.0, cache_write=6.25, cache_read=0.50)
SONNET = Price(input=3.0, output=15.0, cache_write=3.75, cache_read=0.30)
OPUS_5 = Price(input=5.0, output=25.0, cache_write=6.25, cache_read=0.50)
OPUS_5_5 = Price(input=4.0, output=20.0, cache_write=5.0, cache_read=0.20)
SONNET_5 = Price(input=2.0, output=10.0, cache_write=2.50, cache_read=0.20)
SONNET_5_5 = Price(input=2.0, output=10.0, cache_write=2.50, cache_read=0.10)
"""Sonnet 5's prices but half its cache reads (the Sonnet 5.5 migration guide; its overview page still says 0.20)."""
HAIKU_4_5 = Price(input=1.0, output=5.0, cache_write=1.25, cache_read=0.10)
HAIKU_3_5 = Price(input=0.80, output=4.0, cache_write=1.0, cache_read=0.08)
DEEPSEEK_V4_FLASH = Price(input=0.14, output=0.28, cache_write=0.14, cache_read=0.0028)
DEEPSEEK_V4_PRO = Price(input=0.435, output=0.87, cache_write=0.435, cache_read=0.003625)

PRICES: dict[str, Price] = {
    "claude-opus-5-5": OPUS_5_5,
    "claude-opus-5": OPUS_5,
    "claude-sonnet-5-5": SONNET_5_5,
    "claude-sonnet-5": SONNET_5,
    "claude-opus-4": OPUS_4,
    "claude-opus-4-1": OPUS_4,
    "claude-opus-4-5": OPUS_4_5,
    "claude-opus-4-6": OPUS_4_5,
    "claude-opus-4-7": OPUS_4_5,
    "claude-opus-4-8": OPUS_4_5,
    "claude-sonnet-4": SONNET,
    "claude-sonnet-4-5": SONNET,
    "claude-sonnet-4-6": SONNET,
    "claude-haiku-4-5": HAIKU_4_5,
    "claude-3-7-sonnet": SONNET,
    "claude-3-5-sonnet": SONNET,
    "claude-3-5-haiku": HAIKU_3_5,
    "deepseek-v4-flash": DEEPSEEK_V4_FLASH,
    "deepseek-v4-pro": DEEPSEEK_V4_PRO,
    "deepseek-chat": DEEPSEEK_V4_FLASH,
    "deepseek-reasoner": DEEPSEEK_V4_FLASH,
}
"""Keyed by model family: what `family` makes of an id."""

ALIASES = {"claude-opus-4-0": "claude-opus-4", "claude-sonnet-4-0": "claude-sonnet-4"}

_PLATFORM_PREFIX = re.compile(r"^.*?(?=claude-)")  # "us.anthropic.", "anthropic/" on Bedrock, OpenRouter
_VERSION_DOT = re.compile(r"(?<=\d)\.(?=\d)")  # OpenRouter writes "claude-sonnet-4.5"
_SUFFIX = re.compile(r"(\[1m\]|:thinking|-v\d+(:\d+)?|@\d{8}|-\d{8}|-latest)$")


def family(model: str) -> str:
    """The price-list key of a model id: dated ids, aliases and cloud spellings collapse to one name.

    `claude-sonnet-4-5-20250929`, `claude-sonnet-4-5`, `anthropic.claude-sonnet-4-5-20250929-v1:0`,
    `claude-sonnet-4-5@20250929` and `anthropic/claude-sonnet-4.5` are all `claude-sonnet-4-5`.
    """
    name = _VERSION_DOT.sub("-", _PLATFORM_PREFIX.sub("", model.strip().lower(), count=1))
    while (stripped := _SUFFIX.sub("", name)) != name:
        name = stripped
    return ALIASES.get(name, name)


def price_of(model: str) -> Price | None:
    return PRICES.get(family(model))


def cost(model: str, usage: Usage) -> float | None:
    """Dollars for `usage` on `model`, or None for a model without a known price (show tokens only)."""
    price = price_of(model)
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_creation_input_tokens * price.cache_write
        + usage.cache_read_input_tokens * price.cache_read
    ) / 1_000_000
