"""Images the user attaches: `@shot.png`, `-p --image`, a path dragged into the REPL; what the model receives,
what scripts are told, and what the terminal shows."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from PIL import Image
from support import scripted_agent
from support.fake_api import answer

from mini_agent.app.build import context_keeper
from mini_agent.context.images import pasted_images
from mini_agent.context.reports import ImagesAttached


def png(path: Path, size: tuple[int, int] = (40, 30)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (10, 200, 30)).save(path, "PNG")
    return path


def images_of(message: dict) -> list[dict]:
    return [block for block in message["content"] if block.get("type") == "image"]


def texts_of(message: dict) -> str:
    return "\n".join(block.get("text", "") for block in message["content"] if block.get("type") == "text")


def test_an_at_mention_of_an_image_attaches_it_beside_the_text(run_cli, api, tmp_path: Path) -> None:
    shot = png(tmp_path / "shots" / "shot.png")
    api.script(answer("A green rectangle."))

    done = run_cli(["-p", "What is in @shots/shot.png?"], api)

    assert done.returncode == 0, done.stderr.decode()
    (message,) = api.message_requests[0]["messages"]
    assert message["content"][0] == {"type": "text", "text": "What is in @shots/shot.png?"}  # as typed
    (image,) = images_of(message)
    assert image["source"] == {"type": "base64", "media_type": "image/png",
                               "data": base64.b64encode(shot.read_bytes()).decode()}  # fmt: skip
    assert "[image @shots/shot.png" in texts_of(message) and "PNG image, 40×30 px" in texts_of(message)
    assert "binary file" not in texts_of(message)  # the mentions enricher left it to the attachment
    assert "attached image @shots/shot.png: PNG image, 40×30 px" in done.stderr.decode()


def test_image_flags_attach_files_and_stream_json_says_what_without_the_bytes(run_cli, api, tmp_path: Path) -> None:
    png(tmp_path / "a.png")
    Image.new("RGB", (2000, 500)).save(tmp_path / "b.jpg", "JPEG")
    api.script(answer("Two images."))

    done = run_cli(["-p", "Compare", "--image", "a.png", "-i", "b.jpg", "--output-format", "stream-json"], api)

    assert done.returncode == 0, done.stderr.decode()
    (message,) = api.message_requests[0]["messages"]
    assert [i["source"]["media_type"] for i in images_of(message)] == ["image/png", "image/jpeg"]
    records = [json.loads(line) for line in done.stdout.decode().splitlines()]
    (attachment,) = [record for record in records if record["type"] == "attachment"]
    assert [(i["label"], i["width"], i["height"]) for i in attachment["images"]] == [
        ("a.png", 40, 30), ("b.jpg", 1568, 392)]  # fmt: skip
    assert "scaled down from 2000×500" in attachment["images"][1]["description"]
    assert len(done.stdout) < 5000  # a short description, not the base64


@pytest.mark.parametrize(
    ("make", "problem"),
    [(lambda p: None, "no such file"), (lambda p: p.write_text("hello\n"), "not an image")],
)
def test_an_image_flag_that_cannot_be_sent_is_a_usage_error_before_any_request(run_cli, api, tmp_path, make, problem):
    make(tmp_path / "x.png")

    done = run_cli(["-p", "Look", "--image", "x.png"], api)

    assert done.returncode == 2
    assert f"--image x.png: {problem}" in done.stderr.decode()
    assert api.message_requests == []


def test_a_mention_of_a_corrupt_image_says_why_it_is_not_attached(run_cli, api, tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    api.script(answer("It is broken."))

    done = run_cli(["-p", "Look at @bad.png"], api)

    assert done.returncode == 0
    (message,) = api.message_requests[0]["messages"]
    assert not images_of(message) and "not attached: the image is corrupt" in texts_of(message)
    assert "! image @bad.png not attached: the image is corrupt" in done.stderr.decode()


def test_a_file_name_with_escape_sequences_reaches_the_terminal_defused(run_cli, api, tmp_path: Path) -> None:
    name = "evil\x1b]0;pwned\x07\x1b[2J.png"
    png(tmp_path / name)
    api.script(answer("ok"))

    done = run_cli(["-p", f'Look at @"{name}"'], api)

    assert done.returncode == 0, done.stderr.decode()
    assert "\x1b" not in done.stderr.decode() and "\x07" not in done.stderr.decode()
    assert images_of(api.message_requests[0]["messages"][0])


def test_pasted_paths_are_found_quoted_escaped_or_bare(tmp_path: Path) -> None:
    spaced = png(tmp_path / "My Shot.png")
    plain = png(tmp_path / "plain.png")
    quoted = png(tmp_path / "it's here.png")
    (tmp_path / "notes.txt").write_text("text\n")
    escaped = str(spaced).replace(" ", "\\ ")
    text = (
        f"what is wrong here {escaped} and '{plain}', also \"{quoted}\"? not `{plain}`, not {tmp_path}/notes.txt, "
        f"not {tmp_path}/missing.png"
    )

    found = pasted_images(text, tmp_path)

    assert [image.path for image in found] == [spaced, plain, quoted]
    assert all(image.image is not None for image in found)
    assert pasted_images(f"{plain}.", tmp_path)[0].path == plain  # the sentence's full stop is not the name's


def test_the_repl_turn_attaches_a_dragged_path_and_a_sub_agent_brief_does_not(settings_for, api, tmp_path: Path):
    shot = png(tmp_path / "drag me.png")
    events: list = []
    agent = scripted_agent(settings_for(api), emit=events.append, keeper=context_keeper)
    api.script(answer("seen"), answer("not seen"))

    agent.run_turn(f"'{shot}'", pasted=True)
    agent.run_turn(f"'{shot}'")  # what other front ends send (a sub-agent's brief has no keeper attaching at all)

    first, second = api.message_requests
    assert len(images_of(first["messages"][0])) == 1
    assert not images_of(second["messages"][-1])
    (attached,) = [event for event in events if isinstance(event, ImagesAttached)]
    assert attached.images[0].path == shot


def test_a_sub_agents_keeper_attaches_no_image_even_for_a_mention(settings_for, api, tmp_path: Path) -> None:
    png(tmp_path / "secret.png")
    agent = scripted_agent(settings_for(api))  # the minimal keeper: what sub-agents run with
    api.script(answer("no"))

    agent.run_turn("@secret.png")

    assert not images_of(api.message_requests[0]["messages"][0])


def test_slash_context_counts_attached_images_by_their_pixels(settings_for, api, tmp_path: Path) -> None:
    from mini_agent.ui.context_view import context_parts

    png(tmp_path / "wide.png", (1500, 500))
    agent = scripted_agent(settings_for(api), keeper=context_keeper)
    api.script(answer("seen"))
    agent.run_turn("@wide.png")

    parts = {part.name: part.tokens for part in context_parts(agent)[0]}

    assert parts["images"] == 1000  # 1500 × 500 / 750; its ~4 KB of base64 is not counted as text
    assert parts["messages"] < 100
