"""An editor's prompt (ACP content blocks) as mini-agent's turn input: the words, the context beside them, images.

Text blocks are the user's words. A link to a file (`resource_link`, a `file://` URI) becomes an `@path` mention
of that file, read by the same machinery as a mention typed in the REPL (size limits, secrets masked). An
embedded resource (`embeddedContext`: an editor's selection or unsaved buffer) goes beside the words as escaped
text, like piped input: data, never instructions. Images are fitted as attached image files are.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlparse

from mini_agent.xmltext import escape, quoteattr

SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


@dataclass(frozen=True)
class TurnInput:
    text: str
    attached: str | None
    """Embedded resources, escaped, for the turn's `stdin` block; None when there are none."""
    images: tuple


def turn_input(blocks: list) -> TurnInput:
    words: list[str] = []
    beside: list[str] = []
    images: list = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            words.append(block.text)
        elif kind == "resource_link":
            words.append(_mention(block.uri, block.name))
        elif kind == "resource":
            text = getattr(block.resource, "text", None)
            uri = block.resource.uri
            if isinstance(text, str):
                beside.append(f"<resource uri={quoteattr(uri)}>\n{escape(text)}\n</resource>")
            else:
                words.append(_mention(uri, uri))
        elif kind == "image":
            images.append(_image(block.data, block.mime_type, block.uri))
    return TurnInput("\n".join(words), "\n".join(beside) or None, tuple(images))


def _mention(uri: str, name: str) -> str:
    """A file the editor links to, as an `@` mention; anything else (or a path a mention cannot spell) named."""
    parsed = urlparse(uri)
    path = unquote(parsed.path) if parsed.scheme == "file" else None
    if path and not any(character.isspace() for character in path):
        return f"@{path}"
    return f"[{name}]({uri})"


def _image(data: str, mime_type: str, uri: str | None):
    """An image block read and fitted like an attached file (through a private temporary file)."""
    from mini_agent.context.images import AttachedImage, attach

    label = uri or f"pasted {mime_type} image"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return AttachedImage(label, Path(label), problem="not base64 data")
    descriptor, name = tempfile.mkstemp(prefix="mini-agent-acp-", suffix=SUFFIXES.get(mime_type, ""))
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(raw)
        return replace(attach(label, Path(name)), path=Path(label))  # the model is told the editor's name
    finally:
        os.unlink(name)
