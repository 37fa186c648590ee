"""Esc Esc and the /rewind picker in a real pseudo-terminal: cancelled, nothing changes; a rewind of the
conversation puts the prompt's words back in the input, and sending them asks without the rewound turn."""

from __future__ import annotations

from support.fake_api import answer
from support.repl import finish, spawn

PROMPT = "›"


def test_esc_esc_lists_the_prompts_cancels_with_esc_and_rewinds_the_conversation(api, tmp_path):
    api.script(answer("One done."), answer("Two done."), answer("Two again."))
    child = spawn(api, tmp_path)
    child.expect(PROMPT)
    child.send("\x1b[200~first \x1b[31mred\x1b[0m prompt\x1b[201~\r")  # pasted: the escapes are text
    child.expect("One done.")
    child.expect(PROMPT)
    child.sendline("second prompt")
    child.expect("Two done.")
    child.expect(PROMPT)

    child.send("\x1b\x1b")  # on the empty prompt
    child.expect("Rewind to just before which prompt")
    child.expect(r"1\. first ⟨ESC⟩\[31mred⟨ESC⟩\[0m prompt")  # the list is sanitised: escapes named, not obeyed
    child.expect(r"2\. second prompt")
    child.expect("Prompt number")
    child.send("\x1b")
    child.expect("Rewind cancelled; nothing changed.")
    child.expect(PROMPT)

    child.sendline("/rewind")
    child.expect("Prompt number")
    child.sendline("")  # Enter: the last prompt
    child.expect("Restore")
    child.sendline("c")
    child.expect("Conversation: back to before prompt 2")
    child.expect("second prompt")  # back in the input line
    child.send("\r")
    child.expect("Two again.")
    child.expect(PROMPT)
    child.sendeof()
    assert finish(child) == 0

    last = api.message_requests[-1]["messages"]
    assert [message["role"] for message in last] == ["user", "assistant", "user"]
    assert last[-1]["content"][0]["text"] == "second prompt" and "Two done." not in str(last)
