"""Every preset against the loopback model answering in that endpoint family's own shapes.

For each family: the base URL and key variable the preset sets, the header the key goes in, the default model
(taken from the endpoint where the server hosts one of the user's choosing), and the context window the
endpoint reports, learnt before the first request is sized. The shapes come from tests/fixtures/endpoints/
(see its README for where each was taken from).
"""

from __future__ import annotations

import json

import pytest
from support import FIXTURES
from support.fake_api import answer

from mini_agent.cli.config import resolve
from mini_agent.model import AnthropicProvider
from mini_agent.model.discovery import DOCUMENTED_WINDOWS
from mini_agent.model.endpoints import PRESETS, family_of

SHAPES = FIXTURES / "endpoints"


def shape(name: str) -> dict:
    return json.loads((SHAPES / name).read_text(encoding="utf-8"))


KEYS = {name: f"sk-{name}-test-0123456789" for name in PRESETS}

# What each family's server answers about itself, as the fake serves it ("METHOD /path" -> JSON).
PAGES = {
    "anthropic": lambda: {f"GET /v1/models/{PRESETS['anthropic'].model}": shape("anthropic__model.json")},
    "deepseek": lambda: {},
    "ollama": lambda: {"GET /api/ps": shape("ollama__api_ps.json"), "POST /api/show": shape("ollama__api_show.json")},
    "vllm": lambda: {"GET /v1/models": shape("vllm__models.json")},
    "llamacpp": lambda: {"GET /props": shape("llamacpp__props.json"), "GET /v1/models": shape("llamacpp__models.json")},
    "litellm": lambda: {
        "GET /v1/models": shape("litellm__models.json"),
        "GET /v1/model/info": shape("litellm__model_info.json"),
    },
    "openrouter": lambda: {"GET /v1/models": shape("openrouter__models.json")},
    "lmstudio": lambda: {"GET /v1/models": LMSTUDIO_MODELS},
    **dict.fromkeys(("moonshot", "moonshot-cn", "zai", "zhipu", "qwen", "qwen-cn", "minimax", "minimax-cn"), dict),
}
DOCUMENTED_ONLY = ("deepseek", "moonshot", "moonshot-cn", "zai", "zhipu", "qwen", "qwen-cn", "minimax", "minimax-cn")
"""Providers whose Anthropic endpoint answers no question about the model: the window is the documented one, or
the 200,000 that stands in when nobody says."""
LMSTUDIO_MODELS = {"object": "list", "data": [{"id": "qwen/qwen3-coder-30b", "object": "model", "owned_by": "me"}]}
"""LM Studio's OpenAI-compatible `GET /v1/models` (lmstudio.ai/docs/developer/openai-compat): ids, no window."""


def expected(family: str) -> tuple[str, int | None]:
    """The model the first request names, and the window the endpoint's own answer gives."""
    if family == "anthropic":
        return PRESETS["anthropic"].model, shape("anthropic__model.json")["max_input_tokens"]
    if family in DOCUMENTED_ONLY:  # list ids at most: the window is the documented one
        return PRESETS[family].model, DOCUMENTED_WINDOWS.get(PRESETS[family].model, 200_000)
    if family == "lmstudio":
        return LMSTUDIO_MODELS["data"][0]["id"], 200_000
    if family == "ollama":
        loaded = shape("ollama__api_ps.json")["models"][0]
        return PRESETS["ollama"].model, loaded["context_length"]
    if family == "vllm":
        first = shape("vllm__models.json")["data"][0]
        return first["id"], first["max_model_len"]
    if family == "llamacpp":
        return shape("llamacpp__models.json")["data"][0]["id"], shape("llamacpp__props.json")[
            "default_generation_settings"
        ]["n_ctx"]
    if family == "litellm":
        first = shape("litellm__models.json")["data"][0]["id"]
        info = next(e for e in shape("litellm__model_info.json")["data"] if e["model_name"] == first)
        return first, info["model_info"]["max_input_tokens"]
    entry = next(e for e in shape("openrouter__models.json")["data"] if e["id"] == RECORDED_OPENROUTER_MODEL)
    return RECORDED_OPENROUTER_MODEL, entry["context_length"]


RECORDED_OPENROUTER_MODEL = "anthropic/claude-sonnet-4.5"
"""The recorded OpenRouter listing predates the preset's default model: the test names one it lists."""


@pytest.mark.parametrize("family", PRESETS)
def test_a_preset_sets_its_url_and_reads_only_its_own_key(family):
    preset = PRESETS[family]
    env = {"ANTHROPIC_API_KEY": "sk-ant-not-for-other-servers-0123", preset.key_variable: KEYS[family]}
    settings = resolve(env, {"provider": family}, files=False).settings
    assert settings.base_url == preset.base_url and family_of(settings.base_url, settings.provider) == family
    assert KEYS[family] in (settings.api_key, settings.auth_token)
    assert settings.model == (preset.model or "")  # "": the endpoint's first model, asked at start


@pytest.mark.parametrize("family", PRESETS)
def test_each_family_end_to_end_model_header_and_window(run_cli, api, family):
    api.pages.update(PAGES[family]())
    model, window = expected(family)
    api.script(answer("Hello from the family."))
    env = {"ANTHROPIC_MODEL": "", "ANTHROPIC_API_KEY": "", PRESETS[family].key_variable: KEYS[family]}
    chosen = ["--model", model] if family == "openrouter" else []
    argv = ["-p", "hi", "--provider", family, "--base-url", api.url, "--output-format", "json", *chosen]
    done = run_cli(argv, api, env=env)
    assert done.returncode == 0, done.stderr.decode()
    record = json.loads(done.stdout)
    assert record["result"] == "Hello from the family."
    first = next(r for r in api.requests if r.method == "POST" and r.path.startswith("/v1/messages"))
    assert first.body["model"] == model
    assert first.headers.get("Authorization") == f"Bearer {KEYS[family]}"
    assert record["context_window"] == window
    # Where prompt and reply share the window, the reply's limit leaves the prompt room (vLLM rejects the rest).
    shared = family in ("vllm", "llamacpp", "ollama")
    assert first.body["max_tokens"] == (min(8192, window // 4) if shared else 8192)
    if family not in DOCUMENTED_ONLY:
        # The window was asked for, and answered, before the first request was sized and sent.
        lookups = [r for r in api.requests if r is not first and not r.path.startswith("/v1/messages")]
        assert lookups and min(r.answered_at or 0 for r in lookups if r.answered_at) <= first.at


def test_a_placeholder_key_serves_local_servers_without_one(run_cli, api):
    api.pages.update(PAGES["vllm"]())
    api.script(answer("ok"))
    env = {"ANTHROPIC_MODEL": "", "ANTHROPIC_API_KEY": ""}
    done = run_cli(["-p", "hi", "--provider", "vllm", "--base-url", api.url], api, env=env)
    assert done.returncode == 0, done.stderr.decode()
    assert api.message_requests and api.requests[-1].headers.get("Authorization") == "Bearer EMPTY"


def test_a_server_that_lists_no_model_is_told_plainly(run_cli, api):
    api.pages["GET /v1/models"] = {"object": "list", "data": []}
    done = run_cli(["-p", "hi", "--provider", "vllm", "--base-url", api.url], api, env={"ANTHROPIC_MODEL": ""})
    assert done.returncode == 1
    error = done.stderr.decode()
    assert "No model configured" in error and "--model" in error and api.url in error
    assert not api.message_requests


def test_an_explicit_model_and_window_win_over_what_the_endpoint_says(run_cli, api):
    api.pages.update(PAGES["vllm"]())
    api.script(answer("ok"))
    args = ["-p", "hi", "--provider", "vllm", "--base-url", api.url, "--model", "mine", "--output-format", "json"]
    done = run_cli(args, api, env={"MINI_AGENT_CONTEXT_WINDOW": "50000"})
    assert done.returncode == 0, done.stderr.decode()
    assert api.message_requests[0]["model"] == "mine" and json.loads(done.stdout)["context_window"] == 50_000


def test_ollama_with_a_small_context_warns_before_the_task_is_lost(run_cli, api):
    api.pages["GET /api/ps"] = {"models": [dict(shape("ollama__api_ps.json")["models"][0], context_length=4096)]}
    api.script(answer("ok"))
    done = run_cli(["-p", "hi", "--provider", "ollama", "--base-url", api.url], api, env={"ANTHROPIC_MODEL": ""})
    assert done.returncode == 0
    error = done.stderr.decode()
    assert "4096" in error and "OLLAMA_CONTEXT_LENGTH" in error and "drops the oldest" in error


def test_ollama_not_yet_loaded_reads_the_models_own_settings(api, settings_for):
    shown = shape("ollama__api_show.json")
    api.pages["GET /api/ps"] = {"models": []}
    api.pages["POST /api/show"] = dict(shown, parameters="temperature 0.7\nnum_ctx 65536")
    provider = AnthropicProvider(settings_for(api, provider="ollama", model="qwen3-coder"))
    provider.warm_up()
    assert provider.context_window(wait=5) == 65_536
    asked = next(r for r in api.requests if r.path == "/api/show")
    assert asked.body == {"model": "qwen3-coder"}

    api.pages["POST /api/show"] = {k: v for k, v in shown.items() if k != "parameters"}
    provider = AnthropicProvider(settings_for(api, provider="ollama", model="qwen3-coder"))
    provider.warm_up()
    trained = [v for k, v in shown["model_info"].items() if k.endswith(".context_length")][0]
    assert provider.context_window(wait=5) == trained


def test_an_endpoint_of_unknown_make_is_asked_every_way(api, settings_for):
    api.pages["GET /props"] = shape("llamacpp__props.json")
    provider = AnthropicProvider(settings_for(api))
    provider.warm_up()
    assert provider.context_window(wait=5) == shape("llamacpp__props.json")["default_generation_settings"]["n_ctx"]


def test_config_says_where_a_presets_missing_model_comes_from(run_cli):
    done = run_cli(["--provider", "vllm", "config"])
    assert done.returncode == 0
    lines = {line.split()[0]: line for line in done.stdout.decode().splitlines() if line and not line.startswith(" ")}
    assert "first one the endpoint lists" in lines["model"] and "provider vllm" in lines["model"]
    assert "what the endpoint reports" in lines["context_window"]
    # Flags of one run (--compact, --compact-focus, --trace) are no settings: config does not list them.
    assert not {"compact_first", "compact_focus", "trace"} & set(lines)


def test_litellms_window_is_said_to_come_from_its_own_model_map():
    from mini_agent.model.discovery import discover

    pages = PAGES["litellm"]()
    model, window = expected("litellm")
    found = discover("litellm", model, lambda method, path, body: pages[f"{method} {path}"])
    assert found.window == window and found.source.startswith("LiteLLM's model map")


@pytest.mark.parametrize(
    "family", ["moonshot", "moonshot-cn", "zai", "zhipu", "qwen", "qwen-cn", "minimax", "lmstudio"]
)
def test_a_new_provider_s_missing_key_names_its_own_variable(run_cli, family):
    """Remote providers need their key; LM Studio without authentication takes its placeholder and runs."""
    variable = PRESETS[family].key_variable
    argv = ["-p", "hi", "--provider", family, "--model", "m", "--base-url", "http://127.0.0.1:9"]
    done = run_cli(argv, env={"ANTHROPIC_API_KEY": "sk-ant-not-for-other-servers-0123", variable: ""})
    said = done.stderr.decode()
    if family == "lmstudio":  # asked with the placeholder key: what fails is the connection
        assert done.returncode == 1 and "Cannot connect to http://127.0.0.1:9" in said and variable not in said
    else:
        assert done.returncode == 2 and variable in said and "Set ANTHROPIC_API_KEY" not in said


def test_a_base_url_of_a_known_provider_is_its_family_and_thinking_takes_a_budget():
    from mini_agent.model.thinking import support_for

    for family in DOCUMENTED_ONLY:
        url = PRESETS[family].base_url
        assert family_of(url) == family
        assert support_for(family_of(url), url, PRESETS[family].model).kind == "budget"
    assert support_for("lmstudio", PRESETS["lmstudio"].base_url, "qwen/qwen3-coder-30b").kind == "none"


def test_the_provider_flags_help_names_every_preset():
    from dataclasses import fields

    from mini_agent.settings import Settings

    declared = next(field for field in fields(Settings) if field.name == "provider").metadata["setting"]
    named = declared.help.replace("(-cn:", "|").replace(",", " |").split(":")[0]
    words = {word.strip(" ()") for word in named.split("|")}
    assert {name for name in PRESETS if not name.endswith("-cn")} <= words
    assert all(name.removesuffix("-cn") in words for name in PRESETS)
