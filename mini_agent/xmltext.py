"""XML escaping for the text we put in tags, as xml.sax.saxutils does it, without importing it; and the one
renderer of `<system_hint>` tags.

saxutils pulls in urllib.request and http.client (~25 ms at start-up) for three small functions.
"""

from __future__ import annotations


def escape(text: str) -> str:
    """&, < and > as entities."""
    return text.replace("&", "&amp;").replace(">", "&gt;").replace("<", "&lt;")


def unescape(text: str, entities: dict[str, str] | None = None) -> str:
    """The reverse of escape, plus any `entities` given (e.g. {"&quot;": '"'})."""
    text = text.replace("&lt;", "<").replace("&gt;", ">")
    for entity, character in (entities or {}).items():
        text = text.replace(entity, character)
    return text.replace("&amp;", "&")


def quoteattr(text: str) -> str:
    """An attribute value with its quotes: double quotes unless the value has them and no single ones."""
    text = escape(text).replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#9;")
    if '"' in text:
        if "'" in text:
            return '"{}"'.format(text.replace('"', "&quot;"))
        return f"'{text}'"
    return f'"{text}"'


def system_hint(type: str, text: str, **attrs: str) -> str:
    """Render a `<system_hint type="..." ...>text</system_hint>` tag with escaped text and attributes."""
    rendered = "".join(f" {name}={quoteattr(str(value))}" for name, value in {"type": type, **attrs}.items())
    return f"<system_hint{rendered}>{escape(text)}</system_hint>"
