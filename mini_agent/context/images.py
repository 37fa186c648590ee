"""Images the user attaches to a message: `@shot.png`, a path dragged or pasted into the REPL, `-p --image`.

Each goes into the user's message as a short text line naming it and then an image block, after the context
blocks; a file that cannot be attached gets a line saying why instead. These are the user's own choice, so they
are read here, in the turn's thread, not by an enricher that a timeout may skip. What the model may open itself
is read_file's business, under the permission policy; here the human named the file.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from mini_agent.context.enrich.mentions import find_mentions, resolve, without_code
from mini_agent.tools import image_file
from mini_agent.xmltext import escape

MAX_IMAGES = 20
"""Images attached per message; the API takes more, but each costs up to ~1,600 tokens."""
_HEAD_BYTES = 18
MAX_PASTED_CANDIDATES = 200
"""Absolute paths looked at per message: a pasted log full of paths must not cost a stat per line."""

# A dragged file arrives as its absolute path: quoted ('...' or "..."), or bare with `\ ` for each space. It
# follows white space or a bracket, so `@/abs/shot.png` is a mention, not a pasted path.
_PASTED = re.compile(
    r"""(?:^|(?<=[\s(\[]))(?:'(?P<single>~?/[^'\n]+)'|"(?P<double>~?/[^"\n]+)"|(?P<bare>~?/(?:\\.|[^\s\\'"])+))"""
)
_TRAILING = ",;:!?)]}."


@dataclass(frozen=True)
class AttachedImage:
    """One image the user attached, or why it could not be."""

    label: str
    """How the user named it: `@shot.png`, a pasted path, a `--image` path."""
    path: Path
    image: image_file.ImageContent | None = None
    problem: str | None = None

    def blocks(self) -> list[dict]:
        """The content blocks for the user's message: a line naming the image, then the image."""
        named = f"{escape(self.label)} ({escape(str(self.path))})"
        if self.image is None:
            return [{"type": "text", "text": f"[image {named} not attached: {escape(self.problem or '')}]"}]
        return [{"type": "text", "text": f"[image {named}: {self.image.describe()}]"}, self.image.block()]

    def to_dict(self) -> dict:
        """For scripts (stream-json) and logs: what was attached, without the bytes."""
        record: dict = {"label": self.label, "path": str(self.path)}
        if self.image is None:
            return {**record, "attached": False, "error": self.problem}
        image = self.image
        return {
            **record,
            "attached": True,
            "media_type": image.media_type,
            "width": image.width,
            "height": image.height,
            "file_bytes": image.source_bytes,
            "tokens": image.tokens,
            "description": image.describe(),
        }

    def line(self) -> str:
        """One line for the human (the terminal sanitiser is the renderer's to apply)."""
        if self.image is None:
            return f"image {self.label} not attached: {self.problem}"
        return f"attached image {self.label}: {self.image.describe()}"


def attach(label: str, path: Path) -> AttachedImage:
    """Read and fit one image the user named; never raises (a problem is recorded in the result)."""
    try:
        # O_NONBLOCK: a path that became a pipe since it was looked at must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return AttachedImage(label, path, problem=_os_problem(exc))
    with open(fd, "rb") as raw:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return AttachedImage(label, path, problem="not a regular file")
        try:
            head = raw.read(_HEAD_BYTES)
            other = image_file.other_image_format(head)
            if other is not None:
                return AttachedImage(label, path, problem=f"a {other} image; PNG, JPEG, GIF and WebP can be sent")
            raw.seek(0)
            image = image_file.load(image_file.read_image(raw))
        except image_file.NotAnImage:
            return AttachedImage(label, path, problem="not an image (PNG, JPEG, GIF, WebP, BMP or TIFF)")
        except image_file.ImageError as exc:
            return AttachedImage(label, path, problem=str(exc))
        except OSError as exc:
            return AttachedImage(label, path, problem=_os_problem(exc))
    return AttachedImage(label, path, image)


def mentioned_images(text: str, cwd: Path) -> list[AttachedImage]:
    """The `@path` mentions of the text whose files are images (by their first bytes), attached."""
    return [attach(f"@{typed}", path) for typed in find_mentions(text) if (path := _image_path(typed, cwd))]


def pasted_images(text: str, cwd: Path) -> list[AttachedImage]:
    """Absolute paths of image files in the text, as a terminal pastes a dragged file, attached. Paths in
    backticks and `@` mentions are left alone (quoted text; the mention is attached as such)."""
    found: dict[Path, str] = {}
    for looked, match in enumerate(_PASTED.finditer(without_code(text))):
        if looked == MAX_PASTED_CANDIDATES:
            break
        quoted = match.group("single") or match.group("double")
        typed = quoted if quoted is not None else re.sub(r"\\(.)", r"\1", match.group("bare"))
        for candidate in (typed, typed.rstrip(_TRAILING)):
            path = _image_path(candidate, cwd)
            if path is not None:
                found.setdefault(path, candidate)
                break
    return [attach(typed, path) for path, typed in found.items()]


def attached_images(
    text: str, cwd: Path, given: tuple[AttachedImage, ...] = (), pasted: bool = False
) -> list[AttachedImage]:
    """Every image of a message, in order: `given` ones (`--image`, read already), pasted paths (when `pasted`),
    mentions; each file once, at most MAX_IMAGES (the rest named as not attached)."""
    images = list(given)
    if pasted:
        images += pasted_images(text, cwd)
    images += mentioned_images(text, cwd)
    seen: set[Path] = set()
    unique = [image for image in images if not (image.path in seen or seen.add(image.path))]
    too_many = f"over {MAX_IMAGES} images in one message"
    return unique[:MAX_IMAGES] + [AttachedImage(i.label, i.path, problem=too_many) for i in unique[MAX_IMAGES:]]


def _image_path(typed: str, cwd: Path) -> Path | None:
    """The resolved path when it names a regular file whose first bytes are an image's; else None."""
    try:
        path = resolve(typed, cwd)
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        head = os.read(fd, _HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return path if image_file.sniff(head) or image_file.other_image_format(head) else None


def _os_problem(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    return exc.strerror or str(exc)
