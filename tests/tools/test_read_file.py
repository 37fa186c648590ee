"""read_file on real files: paging, long lines, encodings, and every way a path can fail to be a text file."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest
from support import PATIENCE
from support.unprivileged import as_unprivileged

from mini_agent.tools.base import ToolContext, ToolRegistry, ToolResult
from mini_agent.tools.read_file import COUNT_TOTAL_MAX_BYTES, MAX_OUTPUT_CHARS, read_file


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def read(ctx: ToolContext, path: str | Path, **arguments: object) -> ToolResult:
    return ToolRegistry([read_file]).call("read_file", {"path": str(path), **arguments}, ctx)


def write_lines(path: Path, count: int, template: str = "line {}") -> Path:
    path.write_text("".join(template.format(number) + "\n" for number in range(1, count + 1)), encoding="utf-8")
    return path


def hint_attributes(content: str) -> dict[str, str]:
    match = re.search(r'<system_hint type="truncated"([^>]*)>', content)
    assert match, content
    return dict(re.findall(r'(\w+)="([^"]*)"', match.group(1)))


def test_lines_are_numbered_like_cat_n(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("import os\n\n    indented\tand tab\n", encoding="utf-8")

    result = read(ctx, "a.py")

    assert not result.is_error
    assert result.content == "     1\timport os\n     2\t\n     3\t    indented\tand tab"


def test_a_page_ends_with_a_hint_giving_the_offset_to_continue(ctx: ToolContext, tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", 10)

    first = read(ctx, "a.txt", offset=3, limit=4)

    assert first.content.splitlines()[:4] == ["     3\tline 3", "     4\tline 4", "     5\tline 5", "     6\tline 6"]
    assert hint_attributes(first.content) == {"lines": "3-6", "next_offset": "7", "total_lines": "10"}
    rest = read(ctx, "a.txt", offset=7)
    assert rest.content == "     7\tline 7\n     8\tline 8\n     9\tline 9\n    10\tline 10"


def test_default_page_is_2000_lines(ctx: ToolContext, tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", 2500)

    result = read(ctx, "a.txt")

    assert result.content.count("\n") == 2000  # 2000 numbered lines, then the hint
    assert result.content.splitlines()[1999] == "  2000\tline 2000"
    assert hint_attributes(result.content)["next_offset"] == "2001"


def test_the_whole_file_gets_no_hint_even_without_final_newline(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\r\nlast")

    result = read(ctx, "a.txt")

    assert result.content == "     1\tone\n     2\ttwo\n     3\tlast"


def test_long_lines_are_cut_visibly_and_the_next_lines_still_follow(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("a" * 1999 + "b" * 3000 + "\nshort\n" + "é" * 2500, encoding="utf-8")

    result = read(ctx, "min.js")

    lines = result.content.splitlines()
    assert lines[0] == "     1\t" + "a" * 1999 + "b… [line cut at 2000 characters]"
    assert lines[1] == "     2\tshort"
    assert lines[2] == "     3\t" + "é" * 2000 + "… [line cut at 2000 characters]"
    assert 'type="truncated"' in result.content and "longer than 2000 characters" in result.content


def test_a_cut_last_line_is_not_mistaken_for_more_file(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("one\n" + "z" * 20_000 + "\n", encoding="utf-8")

    whole = read(ctx, "min.js")
    first_two = read(ctx, "min.js", limit=2)

    assert 'type="truncated" lines=' not in whole.content and 'type="truncated" lines=' not in first_two.content
    assert whole.content.splitlines()[1].endswith("… [line cut at 2000 characters]")


def test_a_line_of_exactly_2000_characters_is_not_cut(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x" * 2000 + "\r\n" + "y" * 2001 + "\n", encoding="utf-8")

    lines = read(ctx, "a.txt").content.splitlines()

    assert lines[0] == "     1\t" + "x" * 2000
    assert lines[1].endswith("… [line cut at 2000 characters]")


def test_output_stops_at_the_character_budget_with_a_hint(ctx: ToolContext, tmp_path: Path) -> None:
    write_lines(tmp_path / "wide.txt", 500, "{:04d}" + "w" * 1500)

    result = read(ctx, "wide.txt")

    shown = [line for line in result.content.splitlines() if not line.startswith("<system_hint")]
    assert 1 < len(shown) < 500
    assert sum(map(len, shown)) <= MAX_OUTPUT_CHARS + 2000
    attrs = hint_attributes(result.content)
    assert attrs["next_offset"] == str(len(shown) + 1)
    assert "output limit" in result.content
    assert read(ctx, "wide.txt", offset=int(attrs["next_offset"]), limit=1).content.startswith(
        f"{len(shown) + 1:>6}\t{len(shown) + 1:04d}w"
    )


def test_offset_past_the_end_says_how_many_lines_there_are(ctx: ToolContext, tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", 3)
    (tmp_path / "b.txt").write_text("one\ntwo", encoding="utf-8")

    result = read(ctx, "a.txt", offset=4)
    unended = read(ctx, "b.txt", offset=9)

    assert result.is_error and "past the end" in result.content and "has 3 lines" in result.content
    assert unended.is_error and "has 2 lines" in unended.content
    assert tmp_path / "a.txt" not in ctx.read_files


@pytest.mark.parametrize("arguments", [{"offset": 0}, {"limit": 0}, {"limit": 2001}, {"offset": "x"}, {"lines": 3}])
def test_invalid_arguments_are_refused(ctx: ToolContext, tmp_path: Path, arguments: dict) -> None:
    write_lines(tmp_path / "a.txt", 3)

    result = read(ctx, "a.txt", **arguments)

    assert result.is_error and "Invalid arguments for read_file" in result.content


def test_an_empty_file_is_a_clear_result_and_counts_as_read(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "bom-only.txt").write_bytes(b"\xef\xbb\xbf")

    result = read(ctx, "empty.txt")

    assert not result.is_error
    assert result.content.startswith('<system_hint type="empty">') and "is empty" in result.content
    assert tmp_path / "empty.txt" in ctx.read_files
    assert "is empty" in read(ctx, "bom-only.txt").content


def test_a_successful_read_is_remembered_and_a_failed_one_is_not(ctx: ToolContext, tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", 3)

    read(ctx, "a.txt", limit=1)
    read(ctx, "missing.txt")

    assert set(ctx.read_files) == {tmp_path / "a.txt"}


def test_a_directory_is_refused_with_some_of_its_entries(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "main.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "pkg").mkdir()

    result = read(ctx, "src")

    assert result.is_error
    assert "is a directory" in result.content and "main.py" in result.content and "pkg/" in result.content
    assert "ls" in result.content


def test_a_missing_file_suggests_similar_names(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "settings.py").write_text("", encoding="utf-8")
    (tmp_path / "README.md").write_text("", encoding="utf-8")

    typo = read(ctx, "setings.py")
    wrong_case = read(ctx, "readme.md")

    assert typo.is_error and "does not exist" in typo.content and "settings.py" in typo.content
    assert wrong_case.is_error and "README.md" in wrong_case.content


def test_a_missing_folder_names_the_nearest_existing_parent(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()

    result = read(ctx, "scr/app/main.py")

    assert result.is_error
    assert f"nearest existing directory is {tmp_path}" in result.content
    assert "src/" in result.content  # the folder the model probably meant


def test_a_file_used_as_a_folder_is_explained(ctx: ToolContext, tmp_path: Path) -> None:
    write_lines(tmp_path / "a.txt", 1)

    result = read(ctx, "a.txt/inner")

    assert result.is_error and "is a file, not a directory" in result.content


def test_binary_files_are_refused_with_their_size(ctx: ToolContext, tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)  # the signature, then junk
    (tmp_path / "data.bin").write_bytes(bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 100)
    (tmp_path / "data.zip").write_bytes(b"PK\x03\x04" + bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 100)

    image = read(ctx, "logo.png")
    controls = read(ctx, "data.bin")
    archive = read(ctx, "data.zip")

    assert image.is_error and "corrupt" in image.content and "PNG" in image.content
    assert controls.is_error and "binary" in controls.content and "800 bytes" in controls.content
    assert archive.is_error and "binary" in archive.content and "application/zip" in archive.content


def test_a_named_pipe_is_refused_without_blocking(ctx: ToolContext, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    results: list[ToolResult] = []

    worker = threading.Thread(target=lambda: results.append(read(ctx, "pipe")), daemon=True)
    worker.start()
    worker.join(timeout=PATIENCE)  # only so a regression cannot hang the suite

    assert results and results[0].is_error and "not a regular file" in results[0].content


@pytest.mark.parametrize(
    ("encoding", "text"),
    [
        (
            "latin-1",
            "Le café est très bon.\nNaïve façade, déjà vu, à bientôt.\nÇa coûte 5 euros, à prendre ou à laisser.\n",
        ),
        ("cp1252", "He said “hello” — and left… The café’s menu was très cher.\nNext line.\n"),
        ("gbk", "你好，世界。这是一个测试文件，用来检查编码。\n第二行内容：中文文本。\n"),
        ("cp1251", "Привет, мир! Это проверка кодировки файла.\nВторая строка текста.\n"),
        ("utf-16", "héllo wörld\nzweite Zeile\n"),  # Python writes a BOM (little-endian here)
        ("utf-16-be", "\ufeffhéllo wörld\nzweite Zeile\n"),
        ("utf-8-sig", "héllo\nwörld\n"),
        ("utf-32", "héllo\nwörld\n"),
    ],
)
def test_text_is_read_in_its_own_encoding(ctx: ToolContext, tmp_path: Path, encoding: str, text: str) -> None:
    (tmp_path / "t.txt").write_bytes(text.encode(encoding))

    result = read(ctx, "t.txt")

    expected_lines = text.lstrip("\ufeff").splitlines()
    assert not result.is_error
    assert result.content == "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(expected_lines, 1))


def test_utf16_pages_and_long_lines_work_like_utf8(ctx: ToolContext, tmp_path: Path) -> None:
    lines = [f"zeile {n} ü" for n in range(1, 51)]
    lines[9] = "ß" * 2500
    (tmp_path / "t.txt").write_bytes(("\r\n".join(lines) + "\r\n").encode("utf-16"))

    result = read(ctx, "t.txt", offset=10, limit=3)

    assert result.content.splitlines()[:3] == [
        "    10\t" + "ß" * 2000 + "… [line cut at 2000 characters]",
        "    11\tzeile 11 ü",
        "    12\tzeile 12 ü",
    ]
    assert hint_attributes(result.content)["next_offset"] == "13"


def test_a_late_offset_in_a_huge_sparse_file_answers(ctx: ToolContext, tmp_path: Path) -> None:
    big = tmp_path / "huge.log"
    with open(big, "wb") as stream:
        stream.write(b"".join(b"entry %d\n" % n for n in range(1, 200_001)))
        stream.truncate(2 * 1024**3)  # 2 GB, almost all of it a hole on disk

    result = read(ctx, "huge.log", offset=190_000, limit=3)

    assert result.content.splitlines()[:3] == ["190000\tentry 190000", "190001\tentry 190001", "190002\tentry 190002"]
    attrs = hint_attributes(result.content)
    assert attrs["next_offset"] == "190003"
    assert "total_lines" not in attrs  # counting 2 GB of lines is exactly what must not happen
    assert big in ctx.read_files


def test_a_file_too_big_to_count_learns_its_total_at_the_end(ctx: ToolContext, tmp_path: Path) -> None:
    count = COUNT_TOTAL_MAX_BYTES // 20 + 1000
    write_lines(tmp_path / "big.txt", count, "{:019d}")  # 20 bytes a line: just over the counting limit

    last_page = read(ctx, "big.txt", offset=count - 1)
    past = read(ctx, "big.txt", offset=count + 1)

    assert last_page.content == f"{count - 1:>6}\t{count - 1:019d}\n{count:>6}\t{count:019d}"
    assert past.is_error and f"has {count} lines" in past.content


def test_permission_denied_is_a_clear_error(shared_dir: Path) -> None:
    secret = shared_dir / "secret.txt"
    secret.write_text("top secret\n", encoding="utf-8")
    secret.chmod(0o000)
    ctx = ToolContext(cwd=shared_dir)
    read(ToolContext(cwd=shared_dir), "missing-warms-imports.txt")

    result = as_unprivileged(lambda: read(ctx, "secret.txt"))

    assert result.is_error
    assert result.content.startswith("Permission denied") and str(secret) in result.content


def test_tool_metadata() -> None:
    schema = read_file.schema()

    assert read_file.risk == "read"
    assert list(schema["input_schema"]["properties"]) == ["path", "offset", "limit"]
    assert schema["input_schema"]["required"] == ["path"]
    assert schema["input_schema"]["properties"]["offset"]["default"] == 1
    assert schema["input_schema"]["properties"]["limit"]["default"] == 2000
    assert "offset" in read_file.guidance and "edit" in read_file.guidance
