"""A file dragged into the REPL (a real pseudo-terminal): the terminal pastes its path, the image is attached."""

from __future__ import annotations

from PIL import Image
from support.fake_api import answer
from support.repl import finish, spawn

PROMPT = "›"


def test_a_dragged_image_path_is_attached_and_named_on_the_terminal(api, tmp_path):
    shot = tmp_path / "My Shot.png"
    Image.new("RGB", (64, 48), (0, 0, 255)).save(shot, "PNG")
    api.script(answer("A blue rectangle."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.sendline("what is this? " + str(shot).replace(" ", "\\ "))  # as a terminal pastes a dropped file
    child.expect("attached image")
    child.expect("64×48 px")
    child.expect("A blue rectangle.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    assert finish(child) == 0
    (message,) = api.message_requests[0]["messages"]
    assert [block["type"] for block in message["content"]].count("image") == 1
