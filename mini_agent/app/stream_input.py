"""`--input-format stream-json`: a long-lived session for programs. Each stdin line is a user message in Claude
Code's shape, `{"type": "user", "message": {"role": "user", "content": "..." or [blocks]}}`, and one turn of the
same session; stream-json records go out as it runs and a `result` after each turn. End of input ends the
session with the last turn's exit status; Ctrl-C ends it as it ends -p (130).

Lines are read one at a time, as they come: a program writes the next message after reading a result. A line
that is not a user message gets a `result` saying why (exit code 2 in it) and the session goes on.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from mini_agent.agent import Agent
from mini_agent.app.environment import Environment
from mini_agent.app.oneshot import failure_record, init_record, result_record, session_fields
from mini_agent.app.turns import Tally, after_turn, take_turn
from mini_agent.errors import ExitStatus
from mini_agent.settings import Settings
from mini_agent.ui.confirm import refuse_without_human
from mini_agent.ui.render import StreamJsonRenderer
from mini_agent.ui.terminal_text import visible

STDIN = Path("<stdin>")
"""The path an image that came inside a message is shown with."""


@dataclass(frozen=True)
class Control:
    """A Claude Code `control_request` line: answered with a `control_response`, never a turn."""

    request_id: str
    subtype: str

    def response(self) -> dict:
        # Lines are read between turns: an interrupt finds nothing running (SIGINT stops a turn), and
        # `initialize` needs nothing set up; anything else is not something mini-agent does.
        if self.subtype in ("interrupt", "initialize"):
            answer = {"subtype": "success", "request_id": self.request_id, "response": {}}
        else:
            error = f"mini-agent takes no {self.subtype!r} control request; send SIGINT to stop a turn."
            answer = {"subtype": "error", "request_id": self.request_id, "error": error}
        return {"type": "control_response", "response": answer}


@dataclass(frozen=True)
class Message:
    """One user message from stdin: its text and the images it carried (context.images.AttachedImage)."""

    text: str
    images: tuple = ()


def run_streamed(
    build: Callable[..., Agent],
    settings: Settings,
    first: str | None,
    started: float,
    sessions,
    environment: Environment,
    images: tuple = (),
) -> ExitStatus:
    """`first`: a -p prompt, taken as the first message before stdin's; `images` (--image) go with the first."""
    out, err = environment.stdout, environment.stderr
    stream = StreamJsonRenderer(out, settings.trace)
    tally = Tally(stream)
    agent = build(tally, refuse_without_human)  # stdin carries the turns: nobody can be asked
    if sessions.notice:
        print(visible(f"mini-agent: {sessions.notice}"), file=err)
    stream.session_id = sessions.session_id
    stream.write(init_record(agent, sessions))
    status: ExitStatus | None = None
    try:
        for number, message in _messages(environment.stdin, first, images):
            begun = environment.clock()
            if isinstance(message, Control):
                stream.write(message.response())
                continue
            if isinstance(message, str):  # why the line is no user message
                record = failure_record(f"stdin line {number}: {message}", ExitStatus.USAGE, settings.model, 0.0)
                stream.write({**record, **session_fields(sessions)})
                continue
            tally.next_turn()
            turn = take_turn(agent, tally, message.text, None, message.images)
            after_turn(sessions, err)
            took = environment.clock() - begun
            record = result_record(agent, turn.result, turn.said, turn.status, tally.steps, took, tally.denials)
            stream.session_id = sessions.session_id
            stream.write({**record, **session_fields(sessions)})
            status = turn.status
            if status == ExitStatus.INTERRUPTED:
                break
    except KeyboardInterrupt:  # between turns, waiting for the next line
        status = ExitStatus.INTERRUPTED
    finally:
        sessions.close()
    if status is None:
        print("mini-agent: no user message came on stdin.", file=err)
        return ExitStatus.USAGE
    return status


def _messages(stdin: TextIO | None, first: str | None, images: tuple) -> Iterator[tuple[int, Message | Control | str]]:
    """(line number, the message or why the line is none), as each line arrives; the -p prompt first (line 0)."""
    if first is not None and first.strip():
        yield 0, Message(first, images)
        images = ()
    if stdin is None:
        return
    number = 0
    while line := stdin.readline():  # one line at a time: the next is written after this one's result is read
        number += 1
        if not line.strip():
            continue
        parsed = parse_line(line)
        if isinstance(parsed, Message) and images:
            parsed, images = Message(parsed.text, (*images, *parsed.images)), ()
        yield number, parsed


def parse_line(line: str) -> Message | Control | str:
    """A stdin line as a user message (or a control request), or why it is neither."""
    try:
        record = json.loads(line)
    except ValueError as exc:
        return f"not JSON ({exc})."
    if isinstance(record, dict) and record.get("type") == "control_request":
        request = record.get("request") if isinstance(record.get("request"), dict) else {}
        return Control(str(record.get("request_id", "")), str(request.get("subtype", "")))
    if not isinstance(record, dict) or record.get("type") != "user":
        kind = record.get("type") if isinstance(record, dict) else type(record).__name__
        return f'a {kind!r} record; only user messages are taken: {{"type": "user", "message": {{...}}}}.'
    message = record.get("message")
    if not isinstance(message, dict) or message.get("role", "user") != "user":
        return 'no user message: "message" must be {"role": "user", "content": ...}.'
    content = message.get("content")
    if isinstance(content, str):
        blocks: list = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = content
    else:
        return '"content" must be a string or a list of content blocks.'
    texts, images = [], []
    for index, block in enumerate(blocks, 1):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image":
            images.append(_image(block, len(images) + 1))
        else:
            return f"content block {index} is {kind!r}; text and image blocks are taken."
    text = "\n\n".join(texts)
    if not text.strip():
        if not images:
            return "the message is empty."
        text = "(an image)"  # the turn needs words; the image's own line names it
    return Message(text, tuple(images))


def _image(block: dict, number: int):
    """An image block (base64 source) as an attachment, checked and fitted as every attached image is."""
    from mini_agent.context.images import AttachedImage
    from mini_agent.tools import image_file

    label = f"image {number} of the message"
    source = block.get("source") if isinstance(block.get("source"), dict) else {}
    if source.get("type") != "base64" or not isinstance(source.get("data"), str):
        return AttachedImage(label, STDIN, problem="only base64 image sources are taken on stdin")
    try:
        data = base64.b64decode(source["data"], validate=True)
        return AttachedImage(label, STDIN, image=image_file.load(data))
    except (binascii.Error, ValueError) as exc:
        return AttachedImage(label, STDIN, problem=f"not base64 ({exc})")
    except image_file.ImageError as exc:
        return AttachedImage(label, STDIN, problem=str(exc))
