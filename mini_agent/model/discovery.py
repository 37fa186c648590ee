"""What an endpoint says about itself: the model it serves and the context window a prompt must fit in.

Each family keeps the window somewhere else: Anthropic's models endpoint (`max_input_tokens`), vLLM's
`/v1/models` (`max_model_len`), llama.cpp's `/props` (`n_ctx` of a slot), Ollama's `/api/ps` (the loaded model's
`context_length`) and `/api/show` (`num_ctx`, else the model's own `context_length`), LiteLLM's `/v1/model/info`.
An endpoint of unknown make is asked in each of those ways until one answers. Servers that host models of the
user's choosing (vLLM, llama.cpp, LiteLLM) give the model id too: the first one they list.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mini_agent import threads

LOOKUP_TIMEOUT = 5.0
OLLAMA_NEEDS = 32_768
"""Below this many tokens a session (system prompt, tools, the task and a few steps of work) does not fit, and
Ollama silently drops the oldest messages, the task first."""


@dataclass
class Discovery:
    """What was learnt; None where the endpoint did not say."""

    window: int | None = None
    source: str | None = None
    """Where the window came from, e.g. `GET /props (n_ctx)`."""
    shared: bool = False
    """The window holds the reply as well as the prompt (vLLM, llama.cpp, Ollama): room must be left for it."""
    models: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    """Things the user must know before the first request, e.g. a window too small for a session."""
    capabilities: dict | None = None
    """What the endpoint says the model takes (Anthropic's `capabilities`: thinking types, effort levels)."""


Fetch = Callable[[str, str, dict | None], Any]
"""(method, path, JSON body or None) -> the parsed JSON answer; raises when the endpoint has no such path."""


def discover(family: str, model: str | None, fetch: Fetch) -> Discovery:
    """Ask the endpoint in its family's ways, all at once (one after another, five ways to a remote gateway cost
    five round trips); an unknown endpoint (`compatible`) is asked in every way. Where several answer, the way
    listed first is believed."""
    shared = family in SHARED_WINDOWS
    steps = _STEPS.get(family, _ALL)
    answers = [Discovery(shared=shared) for _ in steps]
    if len(steps) == 1:
        _ask(steps[0], answers[0], model, fetch)
    else:
        askers = [
            threads.new(_ask, step, answer, model, fetch, name="provider-discovery")
            for step, answer in zip(steps, answers, strict=True)
        ]
        for asker in askers:
            asker.start()
        for asker in askers:
            asker.join()
    return _merged(answers, shared)


def _ask(step: Callable[[Discovery, str | None, Fetch], None], answer: Discovery, model: str | None, fetch: Fetch):
    try:
        step(answer, model, fetch)
    except Exception:  # an endpoint without this path, or an answer in another shape: another way may know
        pass


def _merged(answers: list[Discovery], shared: bool) -> Discovery:
    """One answer from each way's: the window (with its source and sharing) from the first that gave one, the
    model list and capabilities likewise, the notices of the way whose window is believed."""
    found = Discovery(shared=shared)
    windowed = next((answer for answer in answers if answer.window), None)
    if windowed is not None:
        found.window, found.source, found.shared = windowed.window, windowed.source, windowed.shared
        found.notices = list(windowed.notices)
    found.models = next((answer.models for answer in answers if answer.models), [])
    found.capabilities = next((answer.capabilities for answer in answers if answer.capabilities), None)
    return found


def _anthropic(found: Discovery, model: str | None, fetch: Fetch) -> None:
    if not model:
        return
    info = fetch("GET", f"/v1/models/{model}", None)
    if isinstance(info.get("capabilities"), dict):
        found.capabilities = info["capabilities"]
    window = _positive(info.get("max_input_tokens"))
    if window:
        found.window, found.source = window, "GET /v1/models/{id} (max_input_tokens)"


def _models_list(found: Discovery, model: str | None, fetch: Fetch) -> None:
    """`/v1/models`: the ids for a default model, and the window where the server puts one there."""
    data = fetch("GET", "/v1/models", None).get("data") or []
    entries = [entry for entry in data if isinstance(entry, dict) and isinstance(entry.get("id"), str)]
    found.models = found.models or [entry["id"] for entry in entries]
    chosen = next((e for e in entries if e["id"] == model), entries[0] if entries and not model else None)
    if chosen is None or found.window:
        return
    for key in ("max_model_len", "context_length", "max_input_tokens"):  # vLLM's, OpenRouter's, LiteLLM's
        if window := _positive(chosen.get(key)):
            found.window, found.source, found.shared = window, f"GET /v1/models ({key})", key == "max_model_len"
            return


def _llamacpp_props(found: Discovery, model: str | None, fetch: Fetch) -> None:
    props = fetch("GET", "/props", None)
    settings = props.get("default_generation_settings") or {}
    window = _positive(settings.get("n_ctx")) or _positive(props.get("n_ctx"))
    if window and not found.window:
        found.window, found.source, found.shared = window, "GET /props (n_ctx)", True


def _litellm_info(found: Discovery, model: str | None, fetch: Fetch) -> None:
    data = fetch("GET", "/v1/model/info", None).get("data") or []
    for entry in data:
        if not isinstance(entry, dict) or (model and entry.get("model_name") != model):
            continue
        info = entry.get("model_info") or {}
        window = _positive(info.get("max_input_tokens")) or _positive(info.get("max_tokens"))
        if window:
            # LiteLLM answers from its own cost map, which can differ from what the upstream server allows.
            found.window, found.source = window, "LiteLLM's model map, GET /v1/model/info (max_input_tokens)"
            return


def _ollama(found: Discovery, model: str | None, fetch: Fetch) -> None:
    """The running context length if the model is loaded, else the model's `num_ctx`, else its trained length.

    Ollama cuts a prompt longer than its context length from the front without saying so; a window smaller than
    a session needs is worth a warning before the first request.
    """
    if not model:
        return
    running = fetch("GET", "/api/ps", None).get("models") or []
    names = (model, f"{model}:latest")  # Ollama lists a model named without a tag as `:latest`
    loaded = next(
        (m for m in running if isinstance(m, dict) and (m.get("name") in names or m.get("model") in names)), None
    )
    window = _positive(loaded.get("context_length")) if loaded else None
    source = "GET /api/ps (context_length of the loaded model)"
    if not window:
        shown = fetch("POST", "/api/show", {"model": model})
        match = re.search(r"^\s*num_ctx\s+(\d+)", str(shown.get("parameters") or ""), re.MULTILINE)
        window, source = (int(match.group(1)), "POST /api/show (num_ctx)") if match else (None, source)
        if not window:
            info = shown.get("model_info") or {}
            trained = [_positive(v) for k, v in info.items() if k.endswith(".context_length")]
            window = next((v for v in trained if v), None)
            source = "POST /api/show (model_info context_length)"
    if not window:
        return
    found.window, found.source, found.shared = window, source, True
    if window < OLLAMA_NEEDS:
        found.notices.append(
            f"Ollama serves {model} with a context of {window} tokens; a session needs at least {OLLAMA_NEEDS}, and "
            "Ollama silently drops the oldest messages (the task first) when a prompt is longer. Start the server "
            "with OLLAMA_CONTEXT_LENGTH=65536 (or more), or set num_ctx in the model's Modelfile."
        )


def _documented(found: Discovery, model: str | None, fetch: Fetch) -> None:
    """Windows an endpoint documents but does not report (DeepSeek lists ids only)."""
    window = DOCUMENTED_WINDOWS.get(model or "")
    if window:
        found.window, found.source = window, "the provider's documentation"


SHARED_WINDOWS = ("vllm", "llamacpp", "ollama", "lmstudio")
"""Families whose window holds the reply as well as the prompt."""

DOCUMENTED_WINDOWS = {
    "deepseek-v4-pro": 1_000_000,
    "deepseek-flash": 1_000_000,
    "deepseek-v4-flash": 1_000_000,
    **dict.fromkeys(("MiniMax-M2.7", "MiniMax-M2.7-highspeed", "MiniMax-M2.5", "MiniMax-M2.1", "MiniMax-M2"), 204_800),
}
"""api-docs.deepseek.com/quick_start/pricing (2026-11): 1M tokens of context for both DeepSeek models
(`deepseek-flash` is V4.1 Flash; `deepseek-v4-flash` the name before it); platform.minimaxi.com's Anthropic API
page: 204,800 for the M2 models."""

_STEPS = {
    "anthropic": (_anthropic,),
    "openrouter": (_models_list,),
    "deepseek": (_documented,),
    **dict.fromkeys(
        ("moonshot", "moonshot-cn", "zai", "zhipu", "qwen", "qwen-cn", "minimax", "minimax-cn"), (_documented,)
    ),
    "lmstudio": (_models_list,),
    "vllm": (_models_list,),
    "llamacpp": (_llamacpp_props, _models_list),
    "litellm": (_litellm_info, _models_list),
    "ollama": (_ollama,),
}
_ALL = (_anthropic, _llamacpp_props, _models_list, _ollama, _litellm_info)


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
