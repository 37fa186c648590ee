"""Images across a session: read_file's image in the request, an endpoint that refuses images, resume with an
image, compaction of image blocks. Through the command, in process, against the loopback model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image
from support.conversation import without_cache_control
from support.fake_api import answer, failure, tool_use

from mini_agent.context.trim import stub_tool_results
from mini_agent.model.messages import without_images

LLAMA_REFUSAL = "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"


def png(path: Path, size: tuple[int, int] = (40, 30)) -> Path:
    Image.new("RGB", size, (10, 200, 30)).save(path, "PNG")
    return path


def images_in(value) -> int:
    return json.dumps(value).count('"type": "image"')


def test_read_file_sends_an_image_block_in_the_tool_result(run_cli, api, tmp_path: Path) -> None:
    png(tmp_path / "shot.png", (2000, 500))
    api.script(answer(tool_use("read_file", {"path": "shot.png"}, id="r1")), answer("A green bar."))

    done = run_cli(["-p", "Look at the screenshot", "--output-format", "stream-json"], api)

    assert done.returncode == 0, done.stderr.decode()
    (result,) = [b for b in api.message_requests[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    text, image = result["content"]
    assert text["type"] == "text" and "PNG image, 2000×500 px" in text["text"]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    records = [json.loads(line) for line in done.stdout.decode().splitlines()]
    (shown,) = [r for r in records if r["type"] == "tool_result"]
    assert shown["images"] == ["image/png"] and len(json.dumps(shown)) < 1000  # no base64 for scripts


@pytest.mark.parametrize("status", [400, 500])  # llama-server says it with a 500 (tests/e2e/test_llama_server.py)
def test_an_endpoint_that_refuses_images_gets_them_replaced_and_the_session_goes_on(run_cli, api, tmp_path, status):
    shot = png(tmp_path / "shot.png")
    before = shot.read_bytes()
    api.script(failure(status, "invalid_request_error", LLAMA_REFUSAL), answer("I cannot see images."))

    done = run_cli(["-p", "What is in @shot.png?"], api)

    assert done.returncode == 0, done.stderr.decode()
    refused, again = api.message_requests
    assert images_in(refused["messages"]) == 1 and images_in(again["messages"]) == 0
    assert "removed because the model endpoint does not accept images" in json.dumps(again["messages"])
    notices = [line for line in done.stderr.decode().splitlines() if "does not accept images" in line]
    assert len(notices) == 1 and LLAMA_REFUSAL in notices[0]  # one line, naming the cause
    assert shot.read_bytes() == before

    api.script(answer("Still here."))
    later = run_cli(["-c", "-p", "And now?"], api)  # the stored conversation holds the note, not the image

    assert later.returncode == 0, later.stderr.decode()
    resumed = without_cache_control(api.message_requests[-1]["messages"])
    assert json.dumps(resumed[0]) == json.dumps(without_cache_control(again["messages"][0]))  # byte for byte
    assert images_in(resumed) == 0
    assert "Still here." in later.stdout.decode()


def test_a_refusal_that_mentions_images_fails_as_before_when_the_request_had_none(run_cli, api) -> None:
    api.script(failure(400, "invalid_request_error", "vision is not enabled for this key"))

    done = run_cli(["-p", "hello"], api)

    assert done.returncode == 1
    assert "rejected the request (HTTP 400: vision is not enabled" in done.stderr.decode()
    assert len(api.message_requests) == 1


def test_a_server_error_that_only_mentions_an_image_is_retried_as_before(run_cli, api, tmp_path: Path) -> None:
    png(tmp_path / "shot.png")
    api.script(failure(500, "api_error", "internal error while decoding image tensor"), answer("Green."))

    done = run_cli(["-p", "Colour of @shot.png?"], api)

    assert done.returncode == 0, done.stderr.decode()
    assert [images_in(body["messages"]) for body in api.message_requests] == [1, 1]


def test_a_resumed_session_sends_the_image_byte_for_byte(run_cli, api, tmp_path: Path) -> None:
    png(tmp_path / "shot.png")
    api.script(answer("Green."), answer("Yes, green."))

    first = run_cli(["-p", "Colour of @shot.png?"], api)
    png(tmp_path / "shot.png", (50, 50))  # the file changes: the conversation keeps what was sent
    second = run_cli(["-c", "-p", "Sure?"], api)

    assert first.returncode == second.returncode == 0, second.stderr.decode()
    sent_first, sent_second = (without_cache_control(body["messages"]) for body in api.message_requests)
    assert json.dumps(sent_second[0]) == json.dumps(sent_first[0])
    assert images_in(sent_second) == 1


def test_compaction_stubs_old_images_and_leaves_the_current_turns() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "look"}, image]},
        {"role": "assistant", "content": [tool_use("read_file", {"path": "a.png"}, id="t1")]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "a.png"}, image]}
            ],
        },  # fmt: skip
        {"role": "assistant", "content": [{"type": "text", "text": "seen"}]},
        {"role": "user", "content": [{"type": "text", "text": "and this"}, image]},
    ]

    stubbed, count = stub_tool_results(messages, protect_from=4)

    assert count == 2 and images_in(stubbed[:4]) == 0 and stubbed[4] is messages[4]
    assert images_in(messages) == 3  # the originals (the session log) are untouched
    assert without_images(messages, "gone")[1] == 3
