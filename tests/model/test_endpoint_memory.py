"""Discovery asks an endpoint's ways at once, and what a remote endpoint said is remembered between runs.

A gateway of unknown make is asked five ways; one after another that is five round trips before the first
request can be sized. A remote endpoint's answer is kept for a day in the cache directory; a local server's
never (a restart changes its window). The remembered file is untrusted input: anything malformed is ignored.
"""

from __future__ import annotations

import json
import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from support import PATIENCE

from mini_agent.model import AnthropicProvider
from mini_agent.model.discovery import Discovery, discover
from mini_agent.model.endpoint_memory import KEPT_FOR, EndpointMemory

WAYS = {"GET /v1/models/m", "GET /props", "GET /v1/models", "GET /api/ps", "GET /v1/model/info"}


def test_an_endpoint_of_unknown_make_is_asked_every_way_at_once():
    """Each answer waits until all five questions are out: asked one after another, none would be answered."""
    everyone_asked = threading.Barrier(len(WAYS), timeout=PATIENCE)
    asked = []

    def fetch(method, path, body):
        asked.append(f"{method} {path}")
        everyone_asked.wait()
        if path == "/props":
            return {"default_generation_settings": {"n_ctx": 4096}}
        if path == "/v1/models":
            return {"data": [{"id": "m", "max_model_len": 8192}]}
        raise LookupError(path)

    found = discover("compatible", "m", fetch)
    assert set(asked) == WAYS
    # Two ways answered: the one listed first (llama.cpp's /props, before /v1/models) is believed.
    assert (found.window, found.source, found.shared) == (4096, "GET /props (n_ctx)", True)
    assert found.models == ["m"]


@given(st.permutations(range(5)))
@settings(max_examples=25, deadline=None)
def test_the_answer_does_not_depend_on_which_way_answers_first(order):
    """Whatever order the answers come back in, the merged answer is the same."""
    turn = threading.Condition()
    position = [0]
    paths = ["/v1/models/m", "/props", "/v1/models", "/api/ps", "/v1/model/info"]

    def fetch(method, path, body):
        with turn:  # answer strictly in `order`
            turn.wait_for(lambda: paths[order[position[0]]] == path, timeout=PATIENCE)
            position[0] += 1
            turn.notify_all()
        pages = {
            "/v1/models/m": {"max_input_tokens": 200_000, "capabilities": {"thinking": {}}},
            "/v1/models": {"data": [{"id": "m", "max_model_len": 8192}]},
            "/v1/model/info": {"data": [{"model_name": "m", "model_info": {"max_input_tokens": 100}}]},
        }
        if path not in pages:
            raise LookupError(path)
        return pages[path]

    found = discover("compatible", "m", fetch)
    assert (found.window, found.source) == (200_000, "GET /v1/models/{id} (max_input_tokens)")
    assert found.models == ["m"] and found.capabilities == {"thinking": {}}


def test_a_remote_endpoints_answer_is_kept_for_a_day(tmp_path):
    now = [1_000_000.0]
    memory = EndpointMemory(tmp_path / "endpoints.json", clock=lambda: now[0])
    said = Discovery(window=128_000, source="GET /v1/models (context_length)", models=["a", "b"])
    memory.keep("https://gateway.example.com/anthropic", "a", said)
    recalled = memory.recall("https://gateway.example.com/anthropic/", "a")
    assert recalled is not None and (recalled.window, recalled.models) == (128_000, ["a", "b"])
    assert recalled.source == "GET /v1/models (context_length), remembered"
    assert memory.recall("https://gateway.example.com/anthropic", "other-model") is None
    now[0] += KEPT_FOR + 1
    assert memory.recall("https://gateway.example.com/anthropic", "a") is None


def test_a_local_servers_answer_is_never_kept(tmp_path):
    memory = EndpointMemory(tmp_path / "endpoints.json")
    for url in ("http://localhost:8080", "http://127.0.0.1:8000", "http://[::1]:11434", "http://127.0.0.2:1234"):
        memory.keep(url, "m", Discovery(window=4096))
        assert memory.recall(url, "m") is None
    assert not (tmp_path / "endpoints.json").exists()


def test_nothing_said_is_nothing_kept(tmp_path):
    memory = EndpointMemory(tmp_path / "endpoints.json")
    memory.keep("https://api.example.com", "m", Discovery())
    assert not (tmp_path / "endpoints.json").exists()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@given(
    st.dictionaries(
        st.sampled_from(["saved", "window", "source", "shared", "models", "capabilities", "notices", "x"]), json_values
    )
)
@settings(max_examples=200, deadline=None)
def test_a_tampered_memory_is_ignored_never_obeyed(tmp_path_factory, entry):
    path = tmp_path_factory.mktemp("memory") / "endpoints.json"
    path.write_text(json.dumps({"https://api.example.com m": entry}), encoding="utf-8")
    recalled = EndpointMemory(path, clock=lambda: 10.0).recall("https://api.example.com", "m")
    if recalled is not None:  # only a whole, well-typed, fresh entry is used
        assert recalled.window is None or (isinstance(recalled.window, int) and recalled.window > 0)
        assert all(isinstance(model, str) for model in recalled.models)
        assert 0 <= 10.0 - entry["saved"] < KEPT_FOR


def test_broken_files_are_an_empty_memory(tmp_path):
    path = tmp_path / "endpoints.json"
    for text in (b"{", b"[1, 2]", b"\xff\xfe", b""):
        path.write_bytes(text)
        assert EndpointMemory(path).recall("https://api.example.com", "m") is None
    EndpointMemory(path).keep("https://api.example.com", "m", Discovery(window=5))
    assert EndpointMemory(path).recall("https://api.example.com", "m").window == 5


def test_a_remembered_endpoint_is_not_asked_again(api, settings_for, tmp_path):
    """The second run sizes its first request from the memory: no lookup goes out."""
    api.pages["GET /props"] = {"default_generation_settings": {"n_ctx": 12_345}}
    memory = EndpointMemory(tmp_path / "endpoints.json", remembers=lambda url: True)
    first = AnthropicProvider(settings_for(api), memory=memory)
    first.warm_up()
    assert first.context_window(wait=PATIENCE) == 12_345
    asked = len(api.requests)
    assert asked >= 5

    from support import eventually

    eventually(lambda: memory.recall(first.settings.base_url, first.settings.model), "the answer kept")
    second = AnthropicProvider(settings_for(api), memory=memory)
    second.warm_up()
    assert second.context_window(wait=PATIENCE) == 12_345
    assert len(api.requests) == asked
