"""Images for the model: a file recognised by its content, decoded safely, fitted to what the Messages API takes.

Shared by read_file and by what the user attaches (`@shot.png`, a dragged path, `--image`). The bytes are read
once, from a descriptor the caller opened, up to a bound, and decoded from memory: a file that changes after
the check is seen as it was read, and a huge file is never read whole. Pillow (imported only here, only when an
image is read) identifies the format from the bytes, limited to the formats below, so a file named `.png` that
is something else is not trusted and a format whose decoder runs other programs (EPS) is never opened.

PNG, JPEG, GIF and WebP go as they are when they fit: long edge at most 1568 px and about 1.2 megapixels (what
the API recommends; it scales a bigger image down itself, at a cost in latency) and at most 5 MB of base64.
Anything else is re-encoded: scaled down, the first frame of an animation, BMP and TIFF converted to PNG (or
JPEG when a PNG is too big). Dimensions are checked from the header before any pixel is decoded (a small file can
claim 100,000 × 100,000 px). Used by read_file, context/images.py (attachments), mcp/tools.py and the token
estimate (context/tokens.py).
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import BinaryIO

SENT_AS_IS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
CONVERTED = ("BMP", "TIFF")
"""Read and converted to PNG: screenshots on some systems come as these."""
FORMATS = (*SENT_AS_IS, *CONVERTED)
MAX_EDGE = 1568
"""The long edge the API recommends; bigger images are scaled down to it."""
MAX_SENT_PIXELS = 1_200_000
"""About 1,600 tokens: the API scales a bigger image down to this itself, after paying for the upload."""
MAX_ENCODED_BYTES = 5 * 1024 * 1024
"""The API's limit per image, on the base64 text."""
MAX_FILE_BYTES = 50 * 1024 * 1024
"""Bigger files are refused without reading them whole."""
MAX_PIXELS = 50_000_000
"""Bigger images are refused before decoding (about 200 MB of RGBA): the decompression-bomb guard."""
_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)
_BMP_HEADER_SIZES = (12, 16, 40, 52, 56, 64, 108, 124)
"""The DIB header sizes a BMP file can hold after its 14-byte file header: `BM` alone also starts text."""
_OTHER_IMAGES = (
    (b"\x00\x00\x01\x00", "ICO"),
    (b"8BPS", "PSD"),
    (b"\x00\x00\x00\x0cjP  ", "JPEG 2000"),
    (b"\xff\x0a", "JPEG XL"),
    (b"\x00\x00\x00\x0cJXL ", "JPEG XL"),
)
_ISO_BRANDS = {b"heic": "HEIC", b"heix": "HEIC", b"mif1": "HEIF", b"avif": "AVIF", b"avis": "AVIF"}


class ImageError(Exception):
    """An image that cannot be sent; the message says why and what to do, for the model and the human."""


class NotAnImage(ImageError):
    """The bytes are not an image of a format read here (the caller treats the file as it would otherwise)."""


def sniff(sample: bytes) -> str | None:
    """The image format the first bytes announce (PNG, JPEG, GIF, WEBP, TIFF, BMP), or None. Only a gate that
    spares Pillow's import for files that are not images: Pillow decides."""
    if sample[:4] == b"RIFF" and sample[8:12] == b"WEBP":
        return "WEBP"
    if sample[:2] == b"BM" and len(sample) >= 18 and int.from_bytes(sample[14:18], "little") in _BMP_HEADER_SIZES:
        return "BMP"
    return next((kind for magic, kind in _MAGIC if sample.startswith(magic)), None)


def other_image_format(sample: bytes) -> str | None:
    """An image format that is not read here (HEIC, AVIF, ICO, PSD, ...), named so the refusal can say so."""
    if sample[4:8] == b"ftyp" and sample[8:12] in _ISO_BRANDS:
        return _ISO_BRANDS[sample[8:12]]
    return next((kind for magic, kind in _OTHER_IMAGES if sample.startswith(magic)), None)


@dataclass(frozen=True)
class ImageContent:
    """An image ready for a request: the content block's fields and what was done to get them."""

    media_type: str
    data: str
    """Base64 of the bytes sent."""
    width: int
    height: int
    source_format: str
    source_width: int
    source_height: int
    source_bytes: int
    changes: tuple[str, ...] = ()
    """What was done (`scaled down from 4000×3000`, `first frame of 12`, `converted from BMP`); empty: as is."""

    def block(self) -> dict:
        return {"type": "image", "source": {"type": "base64", "media_type": self.media_type, "data": self.data}}

    def describe(self) -> str:
        """One line: the file's format, size and what was sent (no path: callers name it, escaped for where)."""
        line = f"{self.source_format} image, {self.source_width}×{self.source_height} px, {self.source_bytes:,} bytes"
        if self.changes:
            sent = f"{self.width}×{self.height} px {self.media_type.removeprefix('image/').upper()}"
            line += f"; sent as {sent} ({', '.join(self.changes)})"
        return line

    @property
    def tokens(self) -> int:
        return image_tokens(self.width, self.height)


def image_tokens(width: int, height: int) -> int:
    """What the API charges for an image: about width × height / 750 tokens, at the size it scales it to."""
    width, height = fitted_size(width, height)
    return max(1, (width * height + 749) // 750)


def fitted_size(width: int, height: int) -> tuple[int, int]:
    """The size within MAX_EDGE and MAX_SENT_PIXELS, aspect ratio kept (the same size, if it fits)."""
    scale = min(1.0, MAX_EDGE / max(width, height, 1), (MAX_SENT_PIXELS / max(width * height, 1)) ** 0.5)
    if scale >= 1.0:
        return width, height
    return min(MAX_EDGE, max(1, round(width * scale))), min(MAX_EDGE, max(1, round(height * scale)))


def dimensions(data: str) -> tuple[int, int] | None:
    """The size of a base64 image (a block's data), read from its header; None if it is not a readable image."""
    from PIL import Image

    try:
        with Image.open(io.BytesIO(base64.b64decode(data, validate=False))) as image:
            return image.size
    except Exception:  # anything at all: this only estimates
        return None


def read_image(stream: BinaryIO, limit: int = MAX_FILE_BYTES) -> bytes:
    """The rest of an open file, up to `limit` bytes; ImageError if it holds more (it is never read whole)."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise ImageError(f"the image file is over {limit // (1024 * 1024)} MB, too big to read; make a smaller copy")
    return data


def load(data: bytes) -> ImageContent:
    """The image in `data`, fitted to the API's limits. NotAnImage when Pillow does not recognise one of FORMATS,
    ImageError when it is one but cannot be sent (corrupt, truncated, too many pixels)."""
    import warnings

    from PIL import Image

    # MAX_PIXELS, checked below, is stricter than Pillow's warning; the warning would only reach the terminal.
    # (A filter, not catch_warnings: that is not thread-safe, and read_file calls run side by side.)
    warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)
    try:
        image = Image.open(io.BytesIO(data), formats=FORMATS)
    except Image.UnidentifiedImageError:
        claimed = sniff(data[:18])
        if claimed is not None:
            raise ImageError(f"the image is corrupt (it starts like a {claimed} file, but cannot be decoded)") from None
        raise NotAnImage("not an image of a supported format") from None
    except Image.DecompressionBombError:
        raise ImageError(_too_many_pixels()) from None
    except (OSError, SyntaxError, ValueError, EOFError) as exc:  # Pillow reports a bad header with any of these
        raise ImageError(f"the image is corrupt ({_reason(exc)})") from None
    with image:
        kind = str(image.format)
        width, height = image.size
        if width <= 0 or height <= 0:
            raise ImageError("the image is corrupt (it has no pixels)")
        if width * height > MAX_PIXELS:
            raise ImageError(_too_many_pixels(width, height))
        frames = int(getattr(image, "n_frames", 1) or 1)
        fits = fitted_size(width, height) == (width, height) and _encoded_size(len(data)) <= MAX_ENCODED_BYTES
        try:
            if kind in SENT_AS_IS and frames == 1 and fits:
                image.load()  # a truncated or corrupt file fails here, not at the API
                encoded = base64.b64encode(data).decode("ascii")
                return ImageContent(SENT_AS_IS[kind], encoded, width, height, kind, width, height, len(data))
            return _reencoded(image, kind, frames, len(data))
        except Image.DecompressionBombError:
            raise ImageError(_too_many_pixels(width, height)) from None
        except (OSError, SyntaxError, ValueError, EOFError, MemoryError) as exc:
            raise ImageError(f"the image is corrupt or truncated ({_reason(exc)})") from None


def _reencoded(image, kind: str, frames: int, size: int) -> ImageContent:
    from PIL import Image, ImageOps

    width, height = image.size
    changes: list[str] = []
    if frames > 1:
        image.seek(0)
        changes.append(f"first frame of {frames}")
    if kind == "JPEG":
        image.draft("RGB", fitted_size(width, height))  # decoded at 1/2, 1/4 or 1/8 scale where that still fits
    image.load()
    frame = ImageOps.exif_transpose(image) or image
    has_alpha = frame.mode in ("RGBA", "LA", "PA") or (frame.mode == "P" and "transparency" in frame.info)
    frame = frame.convert("RGBA" if has_alpha else "RGB")
    if fitted_size(*frame.size) != frame.size:
        frame = frame.resize(fitted_size(*frame.size), Image.Resampling.LANCZOS, reducing_gap=2.0)
    if frame.size != (width, height):
        changes.append(f"scaled down from {width}×{height}")
    if kind in CONVERTED:
        changes.append(f"converted from {kind}")
    photo = kind in ("JPEG", "WEBP") and not has_alpha
    media_type, encoded = _encode(frame, "JPEG" if photo else "PNG")
    while _encoded_size(len(encoded)) > MAX_ENCODED_BYTES:
        if media_type == "image/png":
            changes.append("as JPEG to fit 5 MB")
            media_type, encoded = _encode(frame.convert("RGB"), "JPEG")
            continue
        frame = frame.resize((max(1, frame.width * 3 // 4), max(1, frame.height * 3 // 4)), Image.Resampling.LANCZOS)
        if "scaled down further to fit 5 MB" not in changes:
            changes.append("scaled down further to fit 5 MB")
        media_type, encoded = _encode(frame, "JPEG")
    data = base64.b64encode(encoded).decode("ascii")
    return ImageContent(media_type, data, frame.width, frame.height, kind, width, height, size, tuple(changes))


def _encode(frame, kind: str) -> tuple[str, bytes]:
    out = io.BytesIO()
    if kind == "JPEG":
        frame.convert("RGB").save(out, "JPEG", quality=85, optimize=True)
        return "image/jpeg", out.getvalue()
    frame.save(out, "PNG", optimize=False, compress_level=6)
    return "image/png", out.getvalue()


def _encoded_size(raw: int) -> int:
    return (raw + 2) // 3 * 4


def _too_many_pixels(width: int = 0, height: int = 0) -> str:
    size = f" ({width}×{height} px)" if width else ""
    return (
        f"the image is too large to decode safely{size}: over {MAX_PIXELS:,} pixels "
        "(a decompression bomb, or a huge scan); make a smaller copy"
    )


def _reason(exc: BaseException) -> str:
    return str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
