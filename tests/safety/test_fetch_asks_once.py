"""web_fetch of a loopback or private address in default mode: the human answers one question, which covers the
connection too; only an address of another kind than the one they were told of asks again."""

from __future__ import annotations

import importlib

from support import scripted_agent
from support.fake_api import answer, tool_use
from support.web_server import WebServer

from mini_agent.safety.permissions import Allow, Deny


def fetch_twice(api, settings_for, host: str, confirm, monkeypatch=None, address: str | None = None) -> list[dict]:
    """Two turns' worth of fetches of `host` on a real loopback server: the tool results the model got."""
    with WebServer() as server:
        server.add("/page", b"dev server page", content_type="text/plain")
        port = server.url("/page").rsplit(":", 1)[1].split("/")[0]
        if address is not None:
            web_connect = importlib.import_module("mini_agent.tools.web_connect")
            monkeypatch.setattr(web_connect, "resolve", lambda name, port: [address])
        api.script(
            answer(tool_use("web_fetch", {"url": f"http://{host}:{port}/page"})),
            answer(tool_use("web_fetch", {"url": f"http://{host}:{port}/page"})),
            answer("Seen."),
        )
        agent = scripted_agent(settings_for(api), confirm=confirm)
        agent.run_turn("look at the dev server")
    return [api.message_requests[index]["messages"][-1]["content"][0] for index in (1, 2)]


def test_a_loopback_dev_server_asks_once_per_call_not_again_at_connect(api, settings_for):
    asked = []

    def yes_once(request):
        asked.append(request.ask.reason)
        return Allow("yes")

    results = fetch_twice(api, settings_for, "localhost", yes_once)
    # one question per call (a one-time yes is for that call), none at connect time
    assert asked == ["localhost is a loopback address"] * 2
    assert all(not block.get("is_error") and "dev server page" in block["content"] for block in results)


def test_a_literal_loopback_address_asks_once(api, settings_for):
    asked = []

    def yes_once(request):
        asked.append(request.ask.reason)
        return Allow("yes")

    results = fetch_twice(api, settings_for, "127.0.0.1", yes_once)
    assert asked == ["127.0.0.1 is a loopback address"] * 2
    assert "dev server page" in results[0]["content"]


def test_a_no_is_one_question_and_nothing_is_fetched(api, settings_for):
    asked = []

    def no(request):
        asked.append(request.ask.reason)
        return Deny("Not run: the human said no.")

    results = fetch_twice(api, settings_for, "localhost", no)
    assert len(asked) == 2 and all(block.get("is_error") for block in results)


def test_a_name_that_resolves_to_another_kind_of_address_still_asks_at_connect(api, settings_for, monkeypatch):
    """`x.localhost` was shown as loopback; when it resolves to a private address the human is asked about that."""
    asked = []

    def yes_once(request):
        asked.append(request.ask.reason)
        return Allow("yes")

    fetch_twice(api, settings_for, "dev.localhost", yes_once, monkeypatch, address="127.0.0.1")
    assert asked == ["dev.localhost is a loopback address"] * 2
    asked.clear()
    api.message_requests.clear()
    fetch_twice(api, settings_for, "dev.localhost", yes_once, monkeypatch, address="10.0.0.7")
    assert asked[:2] == [
        "dev.localhost is a loopback address",
        "dev.localhost resolves to 10.0.0.7, a private network address",
    ]
