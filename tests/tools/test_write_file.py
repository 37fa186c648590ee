"""write_file on real files: creation, the read-before-overwrite rule, atomic replacement, kept conventions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from support.unprivileged import NOBODY, as_unprivileged

from mini_agent.tools.base import ToolContext, ToolRegistry, ToolResult
from mini_agent.tools.read_file import read_file
from mini_agent.tools.write_file import write_file


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def call(ctx: ToolContext, name: str, **arguments: object) -> ToolResult:
    return ToolRegistry([read_file, write_file]).call(name, arguments, ctx)


def write(ctx: ToolContext, path: str | Path, content: str) -> ToolResult:
    return call(ctx, "write_file", path=str(path), content=content)


def default_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def leftovers(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.endswith(".tmp")]


def test_creates_a_file_and_its_missing_folders(ctx: ToolContext, tmp_path: Path) -> None:
    result = write(ctx, "pkg/sub/mod.py", "x = 1\ny = 2\n")

    target = tmp_path / "pkg" / "sub" / "mod.py"
    assert not result.is_error
    assert result.content == f"Created {target} (2 lines, 12 bytes)."
    assert target.read_bytes() == b"x = 1\ny = 2\n"
    assert stat.S_IMODE(target.stat().st_mode) == default_file_mode()
    assert leftovers(target.parent) == []


def test_content_is_written_as_given_in_utf8(ctx: ToolContext, tmp_path: Path) -> None:
    write(ctx, "a.txt", "naïve 中文\nno final newline")

    assert (tmp_path / "a.txt").read_bytes() == "naïve 中文\nno final newline".encode()


def test_an_empty_content_creates_an_empty_file(ctx: ToolContext, tmp_path: Path) -> None:
    result = write(ctx, "empty.txt", "")

    assert not result.is_error and (tmp_path / "empty.txt").read_bytes() == b""


def test_overwriting_an_unread_file_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("precious\n", encoding="utf-8")

    result = write(ctx, "a.txt", "clobbered\n")

    assert result.is_error and "has not been read" in result.content
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "precious\n"


def test_overwriting_a_read_file_replaces_it(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n", encoding="utf-8")
    inode_before = target.stat().st_ino
    call(ctx, "read_file", path="a.txt")

    result = write(ctx, "a.txt", "new\ncontent\n")

    assert result.content == f"Overwrote {target} (2 lines, 12 bytes)."
    assert target.read_text(encoding="utf-8") == "new\ncontent\n"
    assert target.stat().st_ino != inode_before  # replaced by rename, not rewritten in place
    assert leftovers(tmp_path) == []


def test_a_file_changed_on_disk_since_it_was_read_is_not_overwritten(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("v1\n", encoding="utf-8")
    call(ctx, "read_file", path="a.txt")
    target.write_text("v2 by the user\n", encoding="utf-8")

    result = write(ctx, "a.txt", "agent's version\n")

    assert result.is_error and "changed on disk" in result.content
    assert target.read_text(encoding="utf-8") == "v2 by the user\n"


def test_a_written_file_can_be_written_again_without_reading(ctx: ToolContext, tmp_path: Path) -> None:
    write(ctx, "a.txt", "first\n")

    result = write(ctx, "a.txt", "second\n")

    assert not result.is_error and (tmp_path / "a.txt").read_text(encoding="utf-8") == "second\n"
    assert tmp_path / "a.txt" in ctx.read_files


def test_the_existing_mode_is_kept(ctx: ToolContext, tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho old\n", encoding="utf-8")
    script.chmod(0o755)
    call(ctx, "read_file", path="run.sh")

    write(ctx, "run.sh", "#!/bin/sh\necho new\n")

    assert stat.S_IMODE(script.stat().st_mode) == 0o755


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")
def test_the_existing_owner_is_kept(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "theirs.txt"
    target.write_text("old\n", encoding="utf-8")
    os.chown(target, NOBODY, NOBODY)
    call(ctx, "read_file", path="theirs.txt")

    write(ctx, "theirs.txt", "new\n")

    assert (target.stat().st_uid, target.stat().st_gid) == (NOBODY, NOBODY)


def test_crlf_and_legacy_encoding_of_an_existing_file_are_kept(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "legacy.txt"
    target.write_bytes("Première ligne, café crème.\r\nDeuxième ligne, très bien.\r\n".encode("latin-1"))
    call(ctx, "read_file", path="legacy.txt")

    result = write(ctx, "legacy.txt", "Nouvelle première ligne, déjà vu.\nFin.\n")

    assert target.read_bytes() == "Nouvelle première ligne, déjà vu.\r\nFin.\r\n".encode("cp1252")
    assert "CRLF line endings kept" in result.content and "encoding cp1252 kept" in result.content


def test_a_bom_is_kept_and_unencodable_content_falls_back_to_utf8(ctx: ToolContext, tmp_path: Path) -> None:
    bom_file = tmp_path / "bom.txt"
    bom_file.write_bytes("\ufeffhello\n".encode("utf-8"))
    legacy = tmp_path / "legacy.txt"
    legacy.write_bytes("Première ligne, café crème, très bien.\n".encode("latin-1"))
    call(ctx, "read_file", path="bom.txt")
    call(ctx, "read_file", path="legacy.txt")

    write(ctx, "bom.txt", "bye\n")
    result = write(ctx, "legacy.txt", "Now with 中文\n")

    assert bom_file.read_bytes() == b"\xef\xbb\xbfbye\n"
    assert legacy.read_bytes() == "Now with 中文\n".encode()
    assert "written as UTF-8" in result.content


def test_writing_through_a_symlink_changes_its_target(ctx: ToolContext, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old\n", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(real)
    call(ctx, "read_file", path="link.txt")

    write(ctx, "link.txt", "new\n")

    assert (tmp_path / "link.txt").is_symlink()
    assert real.read_text(encoding="utf-8") == "new\n"


def test_a_directory_path_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()

    result = write(ctx, "src", "x\n")

    assert result.is_error and "is a directory" in result.content
    assert (tmp_path / "src").is_dir()


def test_a_file_in_the_way_of_a_folder_is_explained(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("a file\n", encoding="utf-8")

    result = write(ctx, "notes/today.md", "x\n")

    assert result.is_error and "is an existing file, not a directory" in result.content
    assert (tmp_path / "notes").read_text(encoding="utf-8") == "a file\n"


def test_permission_denied_is_a_clear_error_and_leaves_nothing_behind(shared_dir: Path) -> None:
    locked = shared_dir / "locked"
    locked.mkdir()
    (locked / "a.txt").write_text("old\n", encoding="utf-8")
    (locked / "a.txt").chmod(0o644)
    locked.chmod(0o555)  # others may read, nobody may create files in it
    ctx = ToolContext(cwd=shared_dir)
    ctx.remember(locked / "a.txt")
    write(ctx, "warm-up.txt", "loads every module the child needs\n")

    result = as_unprivileged(lambda: write(ctx, "locked/a.txt", "new\n"))

    assert result.is_error and result.content.startswith("Permission denied") and "locked" in result.content
    assert (locked / "a.txt").read_text(encoding="utf-8") == "old\n"
    assert leftovers(locked) == []


def test_tool_metadata() -> None:
    schema = write_file.schema()

    assert write_file.risk == "write"
    assert list(schema["input_schema"]["properties"]) == ["path", "content"]
    assert schema["input_schema"]["required"] == ["path", "content"]
    assert "edit_file" in write_file.guidance and "read" in write_file.guidance


def test_a_same_size_change_within_one_mtime_tick_is_not_overwritten(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("version 1\n")
    assert not call(ctx, "read_file", path="a.txt").is_error
    before = target.stat()
    target.write_text("version 2\n")
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))

    result = write(ctx, "a.txt", "mine\n")

    assert result.is_error and "changed on disk" in result.content
    assert target.read_text() == "version 2\n"


def test_an_mtime_only_change_does_not_block_an_overwrite(ctx: ToolContext, tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("version 1\n")
    assert not call(ctx, "read_file", path="a.txt").is_error
    os.utime(target, (2_000_000_000, 2_000_000_000))

    result = write(ctx, "a.txt", "mine\n")

    assert not result.is_error, result.content
    assert target.read_text() == "mine\n"


@pytest.mark.parametrize("special", ["fifo", "/dev/null", "/dev/zero"])
def test_a_fifo_or_a_device_is_refused_without_opening_it(ctx: ToolContext, tmp_path: Path, special: str) -> None:
    path = tmp_path / "pipe" if special == "fifo" else Path(special)
    if special == "fifo":
        os.mkfifo(path)

    result = write(ctx, path, "data\n")

    kind = "named pipe" if special == "fifo" else "character device"
    assert result.is_error and f"is not a regular file (it is a {kind})" in result.content, result.content
    if special == "fifo":
        assert stat.S_ISFIFO(path.stat().st_mode) and leftovers(tmp_path) == []


def test_overwriting_a_2_gb_file_checks_it_without_reading_it_all(ctx: ToolContext, tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    with open(big, "wb") as stream:
        stream.write(b"line one\n")
        stream.truncate(2 * 1024**3)
    ctx.remember(big)  # over the hashing limit: stamped by size, times and inode
    os.utime(big, (1_000_000_000, 1_000_000_000))

    changed = write(ctx, "big.log", "short now\n")

    assert changed.is_error and "changed on disk" in changed.content
    assert big.stat().st_size == 2 * 1024**3
