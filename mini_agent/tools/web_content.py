"""What web_fetch reads and how its bytes become text: content types, charsets, sniffing.

Charsets follow what browsers do: a byte-order mark wins, then the Content-Type header, then (for HTML) the
page's own <meta charset>; without any, UTF-8 if the bytes are valid UTF-8, else a detected encoding.
"""

from __future__ import annotations

import codecs
import re
from typing import Literal

from mini_agent.tools.base import ToolError

Kind = Literal["html", "text", ""]

HTML_TYPES = {"text/html", "application/xhtml+xml"}
TEXT_TYPES = {
    "application/json", "application/xml", "application/javascript", "application/ecmascript",
    "application/x-javascript", "application/yaml", "application/x-yaml", "application/toml",
    "application/x-toml", "application/sql", "application/x-sh", "application/x-ndjson", "application/graphql",
}  # fmt: skip
# Labels browsers decode with a wider codec (WHATWG Encoding): pages labelled latin-1 are really cp1252.
WIDER_CODEC = {"iso8859-1": "cp1252", "ascii": "cp1252", "gb2312": "gb18030", "gbk": "gb18030"}
META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w:.-]+)""", re.IGNORECASE)
TAGS = re.compile(r"(?is)<(script|style)\b.*?(</\1>|$)|<[^>]*>?")
"""Markup to blank out of an error body; script and style contents go with their tags."""
BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def kind_of(content_type: str) -> Kind | None:
    """'html', 'text', '' (no type given: sniff the body) or None (refused)."""
    media = content_type.split(";")[0].strip().lower()
    if not media:
        return ""
    if media in HTML_TYPES:
        return "html"
    if media.startswith("text/") or media in TEXT_TYPES or media.endswith(("+json", "+xml")):
        return "text"
    return None


def sniff(url: str, body: bytes) -> Kind:
    if _bom_codec(body) is None and b"\x00" in body[:8192]:
        raise ToolError(f"{url} sent no Content-Type and its content looks binary; web_fetch reads text only.")
    start = body[:1024].lstrip().lower()
    return "html" if start.startswith((b"<!doctype html", b"<html")) else "text"


def decode(body: bytes, declared: str | None, *, html: bool) -> str:
    """Text from the BOM's, the header's or the page's own charset; else UTF-8; else a detected one."""
    meta = _meta_charset(body) if html else None
    for label in (_bom_codec(body), declared, meta):
        codec = _codec(label)
        if codec:
            return body.decode(codec, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    from mini_agent.tools.textfile import guess_legacy_encoding

    guessed = guess_legacy_encoding(body)
    # Without a guess, cp1252 (the web's usual legacy encoding) still shows most letters.
    return body.decode(guessed.codec if guessed else "cp1252", errors="replace")


def snippet(head: bytes, content_type: str, charset: str | None, limit: int = 300) -> str:
    """The first words of a (possibly HTML) error body as one line; nothing for binary bodies."""
    if kind_of(content_type) is None:
        return ""
    text = decode(head, charset, html=False)
    if "<" in text:
        text = TAGS.sub(" ", text)
    text = " ".join(text.split())
    return text[:limit] + ("..." if len(text) > limit else "")


def _bom_codec(body: bytes) -> str | None:
    return next((codec for bom, codec in BOMS if body.startswith(bom)), None)


def _meta_charset(body: bytes) -> str | None:
    match = META_CHARSET.search(body[:4096])
    if not match:
        return None
    label = match.group(1).decode("ascii", errors="ignore")
    return "utf-8" if label.lower().startswith("utf-16") else label  # bytes we could regex are not UTF-16


def _codec(label: str | None) -> str | None:
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip().strip("'\"")).name
    except LookupError:
        return None
    return WIDER_CODEC.get(name, name)
