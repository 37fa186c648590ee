"""Prices: model ids in every spelling find their family; unknown models have no price."""

from __future__ import annotations

import pytest

from mini_agent.model.pricing import PRICES, cost, family, price_of
from mini_agent.usage import Usage


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"),
        ("claude-sonnet-4-5[1m]", "claude-sonnet-4-5"),
        ("claude-sonnet-5-5", "claude-sonnet-5-5"),
        ("anthropic/claude-sonnet-5.5", "claude-sonnet-5-5"),
        ("claude-sonnet-5", "claude-sonnet-5"),
        ("claude-opus-5-5", "claude-opus-5-5"),
        ("claude-opus-5", "claude-opus-5"),
        ("claude-opus-4-0", "claude-opus-4"),
        ("claude-opus-4-20250514", "claude-opus-4"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
        ("claude-opus-4-6", "claude-opus-4-6"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-3-7-sonnet-latest", "claude-3-7-sonnet"),
        ("anthropic/claude-3.7-sonnet:thinking", "claude-3-7-sonnet"),
        ("claude-3-5-sonnet-20240620", "claude-3-5-sonnet"),
        ("claude-3-5-haiku-20241022", "claude-3-5-haiku"),
        ("DeepSeek-Chat", "deepseek-chat"),
    ],
)
def test_every_spelling_of_a_model_finds_its_family(model, expected):
    assert family(model) == expected
    assert price_of(model) is PRICES[expected]


@pytest.mark.parametrize("model", ["gpt-4o", "claude-sonnet-9", "claude-opus-4-5-turbo", "llama3.1:8b", ""])
def test_an_unknown_model_has_no_cost(model):
    assert cost(model, Usage(1000, 1000, 1000, 1000)) is None


def test_cost_counts_each_kind_of_token_at_its_own_price():
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_creation_input_tokens=200_000)
    assert cost("claude-opus-4-1", usage) == pytest.approx(15 + 7.5 + 3.75)
    assert cost("claude-haiku-4-5", Usage(cache_read_input_tokens=2_000_000)) == pytest.approx(0.2)
    assert cost("deepseek-v4-pro", Usage(input_tokens=1_000_000, cache_read_input_tokens=1_000_000)) == (
        pytest.approx(0.435 + 0.003625)
    )
    assert cost("deepseek-v4-flash", Usage(input_tokens=1_000_000, output_tokens=1_000_000)) == pytest.approx(0.42)
    assert cost("deepseek-reasoner", Usage(input_tokens=1_000_000)) == cost("deepseek-v4-flash", Usage(1_000_000))
    assert cost("claude-sonnet-4-5", Usage()) == 0
    assert cost("claude-sonnet-5-5", Usage(1_000_000, 1_000_000, 1_000_000, 1_000_000)) == pytest.approx(
        2 + 10 + 2.5 + 0.1
    )
    assert cost("claude-opus-5-5", Usage(output_tokens=1_000_000, cache_read_input_tokens=1_000_000)) == (
        pytest.approx(20.2)
    )


def test_the_default_model_of_every_preset_with_one_has_a_price():
    from mini_agent.model.endpoints import PRESETS
    from mini_agent.settings import DEFAULT_MODEL

    assert price_of(DEFAULT_MODEL) is not None
    assert price_of(PRESETS["openrouter"].model) is price_of(PRESETS["anthropic"].model)


@pytest.mark.parametrize("name", sorted(PRICES))
def test_a_cache_read_is_the_cheapest_input_and_a_cache_write_the_dearest(name):
    price = PRICES[name]
    assert price.cache_read < price.input <= price.cache_write < price.output
