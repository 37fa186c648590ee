"""An MCP server's images go through the same checks as a file's: fitted to the API's limits, a bomb refused."""

from __future__ import annotations

import base64
import io
import struct
import zlib

from PIL import Image

from mini_agent.mcp.tools import convert


def encoded(image: Image.Image, kind: str = "PNG") -> str:
    out = io.BytesIO()
    image.save(out, kind)
    return base64.b64encode(out.getvalue()).decode()


def bomb() -> str:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    body = chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")
    data = b"\x89PNG\r\n\x1a\n" + body
    return base64.b64encode(data).decode()


def test_a_servers_big_image_is_scaled_and_its_declared_type_corrected() -> None:
    from mcp.types import CallToolResult, ImageContent  # here, not at collection: ~1 s on every test worker

    big = encoded(Image.new("RGB", (3000, 750)), "JPEG")
    result = CallToolResult(content=[ImageContent(type="image", data=big, mimeType="image/png")])

    converted = convert(result)

    (block,) = converted.blocks
    assert block["source"]["media_type"] == "image/jpeg"  # what the bytes are, not what the server said
    assert Image.open(io.BytesIO(base64.b64decode(block["source"]["data"]))).size == (1568, 392)


def test_a_servers_bomb_or_junk_is_named_not_sent() -> None:
    from mcp.types import CallToolResult, ImageContent, TextContent

    result = CallToolResult(
        content=[
            TextContent(type="text", text="here"),
            ImageContent(type="image", data=bomb(), mimeType="image/png"),
            ImageContent(type="image", data="not base64!", mimeType="image/png"),
        ]
    )

    converted = convert(result)

    assert converted.blocks == ()
    assert "too large to decode safely" in converted.content and "not valid base64" in converted.content
