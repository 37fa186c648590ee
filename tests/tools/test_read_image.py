"""read_file on real image files made with Pillow: blocks, downscaling, the API's limits, and every refusal."""

from __future__ import annotations

import base64
import io
import os
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from mini_agent.tools import image_file
from mini_agent.tools.base import ToolContext, ToolRegistry, ToolResult
from mini_agent.tools.image_file import MAX_EDGE, MAX_ENCODED_BYTES, image_tokens
from mini_agent.tools.read_file import read_file


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def read(ctx: ToolContext, path: str | Path) -> ToolResult:
    return ToolRegistry([read_file]).call("read_file", {"path": str(path)}, ctx)


def make(path: Path, size: tuple[int, int], kind: str = "PNG", mode: str = "RGB", **options: object) -> Path:
    Image.new(mode, size, (200, 30, 40) if mode == "RGB" else None).save(path, kind, **options)
    return path


def sent(result: ToolResult) -> Image.Image:
    """The image the model gets, decoded from the block."""
    (block,) = result.blocks
    assert block["type"] == "image" and block["source"]["type"] == "base64"
    image = Image.open(io.BytesIO(base64.b64decode(block["source"]["data"])))
    assert Image.MIME[image.format] == block["source"]["media_type"]
    return image


@pytest.mark.parametrize(("kind", "media_type"), [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"),
                                                  ("WEBP", "image/webp")])  # fmt: skip
def test_a_small_image_goes_as_is_with_a_line_naming_it(ctx: ToolContext, tmp_path: Path, kind, media_type) -> None:
    path = make(tmp_path / "shot.bin", (40, 30), kind)  # the extension says nothing: the content does

    result = read(ctx, "shot.bin")

    assert not result.is_error, result.content
    assert result.blocks[0]["source"]["media_type"] == media_type
    assert base64.b64decode(result.blocks[0]["source"]["data"]) == path.read_bytes()
    assert f"{kind} image, 40×30 px, {path.stat().st_size:,} bytes" in result.content
    assert "sent as" not in result.content


def test_a_big_image_is_scaled_to_the_recommended_long_edge(ctx: ToolContext, tmp_path: Path) -> None:
    make(tmp_path / "big.png", (2000, 500))

    result = read(ctx, "big.png")

    assert sent(result).size == (MAX_EDGE, 392)
    assert "2000×500 px" in result.content and "scaled down from 2000×500" in result.content


def test_a_text_file_named_png_is_read_as_text(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "notes.png").write_text("BM is how this line starts\n", encoding="utf-8")

    result = read(ctx, "notes.png")

    assert not result.blocks and "BM is how this line starts" in result.content


def test_bmp_and_tiff_are_converted_to_png(ctx: ToolContext, tmp_path: Path) -> None:
    make(tmp_path / "a.bmp", (20, 10), "BMP")
    make(tmp_path / "a.tiff", (20, 10), "TIFF")

    for name in ("a.bmp", "a.tiff"):
        result = read(ctx, name)
        assert sent(result).format == "PNG", result.content
        assert "converted from" in result.content


def test_an_animated_gif_sends_its_first_frame(ctx: ToolContext, tmp_path: Path) -> None:
    frames = [Image.new("RGB", (16, 16), colour) for colour in ((255, 0, 0), (0, 255, 0), (0, 0, 255))]
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:], duration=50, loop=0)

    result = read(ctx, "anim.gif")

    image = sent(result)
    assert getattr(image, "n_frames", 1) == 1
    assert image.convert("RGB").getpixel((8, 8)) == (255, 0, 0)
    assert "first frame of 3" in result.content


def test_an_image_over_5_mb_is_shrunk_until_it_fits(ctx: ToolContext, tmp_path: Path) -> None:
    # Noise does not compress: a 1000×1000 RGBA PNG of it is ~4 MB, over the API's 5 MB once in base64.
    noise = Image.frombytes("RGBA", (1000, 1000), os.urandom(1000 * 1000 * 4))
    noise.save(tmp_path / "noise.png", "PNG")
    assert (tmp_path / "noise.png").stat().st_size * 4 / 3 > MAX_ENCODED_BYTES

    result = read(ctx, "noise.png")

    assert len(result.blocks[0]["source"]["data"]) <= MAX_ENCODED_BYTES
    assert max(sent(result).size) <= MAX_EDGE
    assert "5 MB" in result.content


def png_claiming(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims a huge size: a decompression bomb's opening."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 64))
        + chunk(b"IEND", b"")
    )


# Over our cap only; over Pillow's warning too; over Pillow's error.
@pytest.mark.parametrize("size", [(9000, 9000), (10_000, 10_000), (100_000, 100_000)])
def test_a_decompression_bomb_is_refused_before_decoding(ctx: ToolContext, tmp_path: Path, size) -> None:
    (tmp_path / "bomb.png").write_bytes(png_claiming(*size))

    result = read(ctx, "bomb.png")

    assert result.is_error and not result.blocks
    assert "too large to decode safely" in result.content


def test_a_truncated_image_is_a_clear_error(ctx: ToolContext, tmp_path: Path) -> None:
    noise = Image.frombytes("RGB", (300, 300), os.urandom(300 * 300 * 3))
    noise.save(tmp_path / "whole.png")
    whole = (tmp_path / "whole.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(whole[: len(whole) // 2])

    result = read(ctx, "cut.png")

    assert result.is_error and "corrupt or truncated" in result.content, result.content


def test_a_corrupt_header_is_a_clear_error(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)

    result = read(ctx, "bad.png")

    assert result.is_error and "Cannot show the image" in result.content and "corrupt" in result.content


def test_an_image_format_not_read_is_named(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "photo.heic").write_bytes(b"\x00\x00\x00\x18ftypheic" + b"\x00" * 100)
    make(tmp_path / "icon.ico", (16, 16), "ICO")

    for name, kind in (("photo.heic", "HEIC"), ("icon.ico", "ICO")):
        result = read(ctx, name)
        assert result.is_error and f"is a {kind} image, a format read_file cannot show" in result.content


def test_a_huge_file_is_never_read_whole(ctx: ToolContext, tmp_path: Path) -> None:
    path = tmp_path / "huge.png"
    with path.open("wb") as out:  # sparse: 2 GB on paper, nothing on disk
        out.write(make(tmp_path / "small.png", (8, 8)).read_bytes())
        out.truncate(2 * 1024**3)

    result = read(ctx, "huge.png")

    assert result.is_error and "too big to read" in result.content


def test_a_symlink_named_png_to_a_text_secret_reads_text_as_the_policy_judged(ctx: ToolContext, tmp_path: Path):
    (tmp_path / "secret.txt").write_text("not an image\n", encoding="utf-8")
    (tmp_path / "shot.png").symlink_to(tmp_path / "secret.txt")

    result = read(ctx, "shot.png")

    assert not result.blocks and "not an image" in result.content


def test_a_big_square_is_scaled_to_the_apis_pixel_budget(ctx: ToolContext, tmp_path: Path) -> None:
    make(tmp_path / "square.png", (1600, 1600))

    width, height = sent(read(ctx, "square.png")).size

    assert width == height and 1090 <= width <= 1096  # the API's table: 1092×1092 for 1:1


def test_tokens_follow_the_api_rule() -> None:
    assert image_tokens(1000, 1000) == 1334
    assert image_tokens(200, 100) == 27
    assert 1590 <= image_tokens(MAX_EDGE, MAX_EDGE) <= 1600  # the API scales it down before counting
    assert 1590 <= image_tokens(20_000, 20_000) <= 1600


def test_the_magic_gate_never_takes_text_for_an_image() -> None:
    assert image_file.sniff(b"hello world") is None
    assert image_file.sniff(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "WEBP"


def test_an_image_swapped_for_a_link_after_the_check_is_not_followed(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "pics").mkdir()
    make(tmp_path / "pics" / "shot.png", (8, 8))
    elsewhere = tmp_path / "outside"
    elsewhere.mkdir()
    make(elsewhere / "shot.png", (9, 9))  # say, a private photo outside the project
    ctx.pin("pics/shot.png", (tmp_path / "pics" / "shot.png").resolve())  # what the policy judged
    (tmp_path / "pics").rename(tmp_path / "was-pics")
    (tmp_path / "pics").symlink_to(elsewhere)  # the race's winning move

    result = read(ctx, "pics/shot.png")

    assert result.is_error and not result.blocks
    assert "changed after the permission check" in result.content


@given(st.integers(1, 200_000), st.integers(1, 200_000))
def test_a_fitted_size_is_within_the_apis_limits_and_keeps_the_shape(width: int, height: int) -> None:
    fitted = image_file.fitted_size(width, height)

    assert max(fitted) <= MAX_EDGE and fitted[0] * fitted[1] <= image_file.MAX_SENT_PIXELS * 1.01
    assert fitted == (width, height) or (fitted[0] <= width and fitted[1] <= height)
    if min(fitted) > 20:  # rounding aside, the aspect ratio is kept
        assert abs(fitted[0] / fitted[1] - width / height) < 0.05 * width / height


@settings(max_examples=12, deadline=None)
@given(
    st.integers(1, 1800),
    st.integers(1, 1800),
    st.sampled_from(["RGB", "RGBA", "L", "P", "LA"]),
    st.sampled_from(["PNG", "GIF", "WEBP", "BMP", "TIFF", "JPEG"]),
)
def test_whatever_is_read_goes_out_within_the_apis_limits(width: int, height: int, mode: str, kind: str) -> None:
    out = io.BytesIO()
    try:
        Image.new(mode, (width, height)).save(out, kind)
    except OSError:  # a mode the format cannot store (LA as BMP, RGBA as JPEG)
        out = io.BytesIO()
        Image.new("RGB", (width, height)).save(out, kind)

    image = image_file.load(out.getvalue())

    assert image.media_type in ("image/png", "image/jpeg", "image/gif", "image/webp")
    assert len(image.data) <= MAX_ENCODED_BYTES and max(image.width, image.height) <= MAX_EDGE
    decoded = Image.open(io.BytesIO(base64.b64decode(image.data)))
    assert decoded.size == (image.width, image.height) and Image.MIME[decoded.format] == image.media_type
