"""edit_file on real files: exact replacement, helpful failures, and every byte outside the edit kept."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mini_agent.tools.base import ToolContext, ToolRegistry, ToolResult
from mini_agent.tools.edit_file import edit_file
from mini_agent.tools.read_file import read_file

PYTHON_SOURCE = """\
def greet(name):
    message = f"Hello, {name}!"
    print(message)
    return message


def farewell(name):
    print(f"Goodbye, {name}.")
"""


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def call(ctx: ToolContext, name: str, **arguments: object) -> ToolResult:
    return ToolRegistry([read_file, edit_file]).call(name, arguments, ctx)


def edit(ctx: ToolContext, path: str | Path, old: str, new: str, **more: object) -> ToolResult:
    return call(ctx, "edit_file", path=str(path), old_string=old, new_string=new, **more)


def seen(ctx: ToolContext, path: Path, data: bytes) -> Path:
    """A file with these bytes that the agent has read."""
    path.write_bytes(data)
    assert not call(ctx, "read_file", path=str(path)).is_error
    return path


def leftovers(directory: Path) -> list[str]:
    return [name for name in os.listdir(directory) if name.endswith(".tmp")]


def occurrences(text: str, part: str) -> int:
    """Occurrences including overlapping ones: "aa" is in "aaa" twice."""
    return sum(1 for start in range(len(text)) if text.startswith(part, start))


def test_replaces_the_one_match_and_shows_the_region_numbered(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "hello.py", PYTHON_SOURCE.encode())

    result = edit(ctx, "hello.py", "    print(message)\n", "    log(message)\n    print(message)\n")

    assert not result.is_error
    assert target.read_text() == PYTHON_SOURCE.replace("    print(message)\n", "    log(message)\n    print(message)\n")
    assert result.content == (
        f"Edited {target}: replaced 1 occurrence on line 3.\n"
        "     1\tdef greet(name):\n"
        '     2\t    message = f"Hello, {name}!"\n'
        "     3\t    log(message)\n"
        "     4\t    print(message)\n"
        "     5\t    return message\n"
        "     6\t\n"
        "     7\t"
    )
    assert leftovers(tmp_path) == []


def test_an_edit_at_the_end_shows_no_line_past_the_end(ctx: ToolContext, tmp_path: Path) -> None:
    seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    result = edit(ctx, "a.py", 'print(f"Goodbye, {name}.")', "return None")

    assert result.content.splitlines()[-1] == "     8\t    return None"


def test_an_unread_file_is_not_edited(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(PYTHON_SOURCE)

    result = edit(ctx, "a.py", "greet", "welcome")

    assert result.is_error and "has not been read" in result.content
    assert (tmp_path / "a.py").read_text() == PYTHON_SOURCE


def test_a_file_changed_since_it_was_read_is_not_edited(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())
    target.write_text(PYTHON_SOURCE + "# the user added this\n")

    result = edit(ctx, "a.py", "def greet", "def welcome")

    assert result.is_error and "changed on disk" in result.content
    assert target.read_text() == PYTHON_SOURCE + "# the user added this\n"


def test_successive_edits_need_no_new_read(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    first = edit(ctx, "a.py", "def greet(name):", "def greet(name: str):")
    second = edit(ctx, "a.py", "def farewell(name):", "def farewell(name: str):")

    assert not first.is_error and not second.is_error
    assert target.read_text().count("name: str") == 2


def test_several_matches_are_refused_with_their_lines(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    result = edit(ctx, "a.py", "print(", "log(")

    assert result.is_error
    assert "occurs 2 times" in result.content and "lines 3, 8" in result.content
    assert "replace_all" in result.content and "surrounding lines" in result.content
    assert target.read_bytes() == PYTHON_SOURCE.encode()


def test_overlapping_matches_count_as_several(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.txt", b"xaaax\n")

    result = edit(ctx, "a.txt", "aa", "b")

    assert result.is_error and "occurs 2 times" in result.content
    assert target.read_bytes() == b"xaaax\n"


def test_replace_all_replaces_every_match(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    result = edit(ctx, "a.py", "print(", "log(", replace_all=True)

    assert not result.is_error
    assert target.read_text() == PYTHON_SOURCE.replace("print(", "log(")
    assert "replaced 2 occurrences" in result.content and "lines 3, 8" in result.content


def test_identical_strings_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    same = edit(ctx, "a.py", "greet", "greet")
    same_but_line_endings = edit(ctx, "a.py", "greet(name):\n", "greet(name):\r\n")

    assert same.is_error and "identical" in same.content
    assert same_but_line_endings.is_error and "only in line endings" in same_but_line_endings.content


def test_not_found_points_to_the_same_text_with_other_whitespace(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    result = edit(ctx, "a.py", 'def greet(name):\n  message = f"Hello, {name}!"', "x")

    assert result.is_error and "not found" in result.content
    assert "different whitespace is on lines 1-2" in result.content
    assert '     2\t    message = f"Hello, {name}!"' in result.content
    assert target.read_bytes() == PYTHON_SOURCE.encode()


def test_not_found_points_to_the_most_similar_lines(ctx: ToolContext, tmp_path: Path) -> None:
    seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    result = edit(ctx, "a.py", 'def farewell(name):\n    print(f"Bye, {name}.")', "x")

    assert result.is_error
    assert "most similar text" in result.content and "lines 7-8" in result.content
    assert '     8\t    print(f"Goodbye, {name}.")' in result.content


def test_not_found_recognises_copied_line_numbers(ctx: ToolContext, tmp_path: Path) -> None:
    seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    result = edit(ctx, "a.py", "     3\t    print(message)", "     3\t    log(message)")

    assert result.is_error and "line-number prefixes" in result.content


def test_not_found_without_anything_similar_says_to_read_again(ctx: ToolContext, tmp_path: Path) -> None:
    seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())

    result = edit(ctx, "a.py", "zzzz qqqq 12345", "x")

    assert result.is_error and "read the file again" in result.content


def test_crlf_file_edited_with_lf_strings_stays_all_crlf(ctx: ToolContext, tmp_path: Path) -> None:
    crlf = PYTHON_SOURCE.replace("\n", "\r\n").encode()
    target = seen(ctx, tmp_path / "win.py", crlf)

    result = edit(ctx, "win.py", "    print(message)\n    return message\n", "    return message.upper()\n    # done\n")

    data = target.read_bytes()
    assert not result.is_error
    assert data.count(b"\n") == data.count(b"\r\n")
    assert (
        data
        == PYTHON_SOURCE.replace("    print(message)\n    return message\n", "    return message.upper()\n    # done\n")
        .replace("\n", "\r\n")
        .encode()
    )


def test_mixed_line_endings_stay_as_they_were_around_the_edit(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "mixed.txt", b"one\r\ntwo\r\nthree\nfour\nfive")

    edit(ctx, "mixed.txt", "two\nthree", "2\n3")
    edit(ctx, "mixed.txt", "four\nfive", "4\n4.5\n5")

    assert target.read_bytes() == b"one\r\n2\r\n3\n4\n4.5\n5"


@pytest.mark.parametrize(
    ("encoding", "text", "old", "new"),
    [
        ("latin-1", "Le café est très bon.\nNaïve façade, déjà vu.\n", "très bon", "très, très bon"),
        ("utf-16", "Grüße aus Köln\r\nzweite Zeile\r\n", "Köln", "Düsseldorf"),
        ("utf-16-be", "\ufeffGrüße aus Köln\nzweite Zeile", "zweite", "dritte\nvierte"),
        ("utf-8-sig", "héllo\nwörld\n", "wörld", "welt"),
        ("gbk", "你好，世界。这是一个测试文件，用来检查编码。\n第二行内容：中文文本。\n", "第二行", "第三行"),
    ],
)
def test_encoding_and_bom_round_trip(
    ctx: ToolContext, tmp_path: Path, encoding: str, text: str, old: str, new: str
) -> None:
    target = seen(ctx, tmp_path / "t.txt", text.encode(encoding))

    result = edit(ctx, "t.txt", old, new)

    assert not result.is_error, result.content
    expected = text.replace(old, new.replace("\n", "\r\n") if "\r\n" in text else new)
    assert target.read_bytes() == expected.encode(encoding)


def test_a_character_the_encoding_lacks_is_refused(ctx: ToolContext, tmp_path: Path) -> None:
    original = "Le café est très bon.\nNaïve façade, déjà vu.\n".encode("latin-1")
    target = seen(ctx, tmp_path / "t.txt", original)

    result = edit(ctx, "t.txt", "bon", "bon 中文")

    assert result.is_error and "cannot represent '中文'" in result.content
    assert target.read_bytes() == original
    assert leftovers(tmp_path) == []


def test_a_failed_write_leaves_the_file_and_no_temporary_file(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "frozen.txt", b"old value\n")
    if (
        shutil.which("chattr") is None
        or subprocess.run(["chattr", "+i", target], check=False, capture_output=True).returncode
    ):
        pytest.skip("needs chattr +i (an immutable file makes the final rename fail after the temp file exists)")
    try:
        result = edit(ctx, "frozen.txt", "old", "new")
    finally:
        subprocess.run(["chattr", "-i", target], check=True)

    assert result.is_error and "cannot write" in result.content
    assert target.read_bytes() == b"old value\n"
    assert leftovers(tmp_path) == []


def test_mode_is_kept(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "run.sh", b"#!/bin/sh\necho hi\n")
    target.chmod(0o755)
    call(ctx, "read_file", path="run.sh")  # chmod changes no stamp we track, but read again to be plain

    edit(ctx, "run.sh", "echo hi", "echo bye")

    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert target.read_bytes() == b"#!/bin/sh\necho bye\n"


@pytest.mark.parametrize("data", [b"first\nlast", b"first\nlast\n", b"first\r\nlast", b"first\r\nlast\r\n"])
def test_presence_or_absence_of_the_final_newline_is_kept(ctx: ToolContext, tmp_path: Path, data: bytes) -> None:
    target = seen(ctx, tmp_path / "t.txt", data)

    edit(ctx, "t.txt", "last", "final")

    assert target.read_bytes() == data.replace(b"last", b"final")


def test_editing_through_a_symlink_keeps_the_link(ctx: ToolContext, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old value\n")
    (tmp_path / "link.txt").symlink_to(real)
    call(ctx, "read_file", path="link.txt")

    edit(ctx, "link.txt", "old", "new")

    assert (tmp_path / "link.txt").is_symlink() and real.read_text() == "new value\n"


def test_empty_old_string_creates_a_new_file(ctx: ToolContext, tmp_path: Path) -> None:
    result = edit(ctx, "new/pkg/mod.py", "", "x = 1\n")

    assert not result.is_error and "Created" in result.content
    assert (tmp_path / "new" / "pkg" / "mod.py").read_bytes() == b"x = 1\n"
    assert not edit(ctx, "new/pkg/mod.py", "x = 1", "x = 2").is_error  # created counts as seen


def test_empty_old_string_fills_an_empty_file_but_not_a_full_one(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "full.txt").write_bytes(b"keep me\n")

    filled = edit(ctx, "empty.txt", "", "content\n")
    refused = edit(ctx, "full.txt", "", "content\n")

    assert not filled.is_error and (tmp_path / "empty.txt").read_bytes() == b"content\n"
    assert refused.is_error and "not empty" in refused.content and "write_file" in refused.content
    assert (tmp_path / "full.txt").read_bytes() == b"keep me\n"


def test_a_missing_file_suggests_how_to_create_one(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("")

    result = edit(ctx, "mian.py", "a", "b")

    assert result.is_error and "main.py" in result.content and "write_file" in result.content


def test_binary_files_and_directories_are_refused(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01binary\x00")
    ctx.remember(tmp_path / "blob.bin")
    (tmp_path / "src").mkdir()

    binary = edit(ctx, "blob.bin", "binary", "text")
    directory = edit(ctx, "src", "a", "b")

    assert binary.is_error and "binary" in binary.content
    assert (tmp_path / "blob.bin").read_bytes() == b"\x00\x01binary\x00"
    assert directory.is_error and "is a directory" in directory.content


CHARS = st.sampled_from(list("ab \t\né中"))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.text(CHARS, max_size=40),
    old=st.text(CHARS, max_size=6),
    new=st.text(CHARS, max_size=6),
    replace_all=st.booleans(),
)
def test_an_edit_applies_exactly_once_or_leaves_the_file_untouched(
    tmp_path: Path, content: str, old: str, new: str, replace_all: bool
) -> None:
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    target = directory / "f.txt"
    target.write_bytes(content.encode())
    ctx = ToolContext(cwd=directory)
    ctx.remember(target)

    result = edit(ctx, target, old, new, replace_all=replace_all)

    after = target.read_bytes().decode()
    if result.is_error:
        assert after == content
    elif replace_all and old:
        assert after == content.replace(old, new)
    else:
        assert (old != "" and occurrences(content, old) == 1) or old == content == ""
        assert after == content.replace(old, new, 1)
    found = occurrences(content, old) >= 1 if replace_all else occurrences(content, old) == 1
    must_apply = old != new and (old == content == "" or (old != "" and found))
    assert result.is_error != must_apply, result.content
    assert os.listdir(directory) == ["f.txt"]  # no temporary file survives, whatever happened


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.text(CHARS, max_size=40), old=st.text(CHARS, min_size=1, max_size=6), new=st.text(CHARS, max_size=6))
def test_a_crlf_file_gets_the_same_edit_with_crlf_line_breaks(tmp_path: Path, content: str, old: str, new: str) -> None:
    assume("\n" in content)
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    target = directory / "f.txt"
    original = content.replace("\n", "\r\n").encode()
    target.write_bytes(original)
    ctx = ToolContext(cwd=directory)
    ctx.remember(target)

    result = edit(ctx, target, old, new)

    if result.is_error:
        assert target.read_bytes() == original
    else:
        assert target.read_bytes() == content.replace(old, new, 1).replace("\n", "\r\n").encode()


def test_tool_metadata() -> None:
    schema = edit_file.schema()

    assert edit_file.risk == "write"
    assert list(schema["input_schema"]["properties"]) == ["path", "old_string", "new_string", "replace_all"]
    assert schema["input_schema"]["required"] == ["path", "old_string", "new_string"]
    assert schema["input_schema"]["properties"]["replace_all"]["default"] is False
    assert "read" in edit_file.guidance and "write_file" in edit_file.guidance


def test_a_same_size_change_with_the_old_mtime_put_back_is_detected(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())
    before = target.stat()
    target.write_text(PYTHON_SOURCE.replace("Hello", "Howdy"))  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # as within one tick of a coarse clock

    result = edit(ctx, "a.py", "def greet", "def welcome")

    assert result.is_error and "changed on disk" in result.content
    assert "Howdy" in target.read_text() and "def greet" in target.read_text()


def test_a_change_hidden_by_touch_r_is_detected(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())
    reference = tmp_path / "reference"
    subprocess.run(["touch", "-r", target, reference], check=True)
    target.write_text(PYTHON_SOURCE.replace("Goodbye", "Farewel"))
    subprocess.run(["touch", "-r", reference, target], check=True)
    assert (target.stat().st_size, target.stat().st_mtime_ns) == (len(PYTHON_SOURCE), reference.stat().st_mtime_ns)

    result = edit(ctx, "a.py", "def greet", "def welcome")

    assert result.is_error and "changed on disk" in result.content


def test_a_touch_that_changes_no_content_does_not_block_the_edit(ctx: ToolContext, tmp_path: Path) -> None:
    target = seen(ctx, tmp_path / "a.py", PYTHON_SOURCE.encode())
    os.utime(target, (1_000_000_000, 1_000_000_000))
    (tmp_path / "replaced").write_text(PYTHON_SOURCE)
    os.replace(tmp_path / "replaced", target)  # even another inode: what matters is the content

    result = edit(ctx, "a.py", "def greet", "def welcome")

    assert not result.is_error, result.content
    assert target.read_text() == PYTHON_SOURCE.replace("def greet", "def welcome")


def test_a_file_too_big_to_hold_in_memory_is_refused_without_reading_it(ctx: ToolContext, tmp_path: Path) -> None:
    big = tmp_path / "dump.sql"
    with open(big, "wb") as stream:
        stream.write(b"INSERT 1;\n")
        stream.truncate(2 * 1024**3)  # 2 GB, a hole on disk
    ctx.remember(big)  # as if read: the size check comes first

    result = edit(ctx, "dump.sql", "INSERT 1", "INSERT 2")

    assert result.is_error and "is 2,147,483,648 bytes" in result.content and "Use bash" in result.content


@pytest.mark.parametrize("special", ["fifo", "/dev/null", "/dev/zero"])
def test_a_fifo_or_a_device_is_refused_without_opening_it(ctx: ToolContext, tmp_path: Path, special: str) -> None:
    path = tmp_path / "pipe" if special == "fifo" else Path(special)
    if special == "fifo":
        os.mkfifo(path)  # opening it would block until a writer came

    edited = edit(ctx, str(path), "a", "b")
    filled = edit(ctx, str(path), "", "b")

    kind = "named pipe" if special == "fifo" else "character device"
    for result in (edited, filled):
        assert result.is_error and f"is not a regular file (it is a {kind})" in result.content, result.content
