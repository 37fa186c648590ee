"""The @mention, reference and URL enrichers, on real files in tmp_path."""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import PATIENCE
from support.unprivileged import run_as_nobody, shared_dir  # noqa: F401 - shared_dir is a fixture

from mini_agent.context.blocks import P0, P1, P2, ContextBlock, Enricher, Skip, TurnInput
from mini_agent.context.enrich.mentions import MAX_MENTIONS, describe, find_mentions, mentions
from mini_agent.context.enrich.references import find_reference, references
from mini_agent.context.enrich.urls import find_urls, urls
from mini_agent.tools.file_view import CUT_MARKER


def turn(text: str, cwd: Path, recent: tuple[Path, ...] = ()) -> TurnInput:
    return TurnInput(text=text, cwd=cwd, now=datetime.now(UTC), user_dir=cwd / "home", recent_files=recent)


def only_block(enricher: Enricher, inp: TurnInput) -> ContextBlock:
    blocks = enricher.enrich(inp)
    assert len(blocks) == 1, blocks
    return blocks[0]


def skip_reason(enricher: Enricher, inp: TurnInput) -> str:
    with pytest.raises(Skip) as skipped:
        enricher.enrich(inp)
    return str(skipped.value)


# --- finding mentions ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("look at @src/app.py", ["src/app.py"]),
        ("@./README.md first", ["./README.md"]),
        ("read @a.b.py.", ["a.b.py"]),
        ("read @a.py, @b.py; @c.py: @d.py! @e.py? ok", ["a.py", "b.py", "c.py", "d.py", "e.py"]),
        ("(see @notes.txt) and [@x.md] and {@y.md}", ["notes.txt", "x.md", "y.md"]),
        ("'@quoted.md' and \"@double.md\"", ["quoted.md", "double.md"]),
        ('open @"path with spaces.txt" now', ["path with spaces.txt"]),
        ("open @'single quoted.txt'", ["single quoted.txt"]),
        ("@~/notes.txt and @/abs/path", ["~/notes.txt", "/abs/path"]),
        ("go up: @.. and @../ and @src/..", ["..", "../", "src/.."]),
        ("@a.py and @a.py again", ["a.py"]),
        ("请看@README.md。然后@src/app.py，谢谢", ["README.md", "src/app.py"]),
        ("mail user@example.com or me@host", []),
        ("use `@decorator` here, and `x@y`", []),
        ("```\n@property\ndef f(): ...\n```\nthen @real.py", ["real.py"]),
        ("```python\n@unclosed_fence.py", []),
        ('an @ alone, @@twice, @"unterminated', []),
    ],
)
def test_find_mentions(text: str, expected: list[str]) -> None:
    assert find_mentions(text) == expected


def test_no_mentions_is_skipped(tmp_path: Path) -> None:
    assert skip_reason(mentions, turn("mail user@example.com about `@x`", tmp_path)) == "no @mentions"


# --- what a mention shows ------------------------------------------------------------------------------------


def test_text_file_is_shown_numbered_like_read_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("import os\n\nprint(os.sep)\n", encoding="utf-8")

    block = only_block(mentions, turn("what does @src/app.py do?", tmp_path))

    assert block.name == "file:src/app.py" and block.priority == P0
    assert block.text == (
        f"Contents of @src/app.py ({tmp_path / 'src' / 'app.py'}, 3 lines), numbered like read_file:\n"
        "     1\timport os\n     2\t\n     3\tprint(os.sep)"
    )


def test_directory_is_listed_sorted_without_hidden_or_junk(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    for folder in ("src", "node_modules", "__pycache__", ".git", ".venv", "docs"):
        (project / folder).mkdir(parents=True)
    for name in ("b.txt", "a.txt", ".env"):
        (project / name).write_text("x", encoding="utf-8")

    block = only_block(mentions, turn("what is in @proj/ ?", tmp_path))

    assert block.name == "file:proj/"
    assert block.text.splitlines() == [
        f"@proj/ is the directory {project} (4 entries, 5 hidden or junk not shown):",
        "a.txt",
        "b.txt",
        "docs/",
        "src/",
    ]


def test_big_directory_listing_is_capped(tmp_path: Path) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for index in range(250):
        (folder / f"f{index:03d}").touch()

    lines = only_block(mentions, turn("@many", tmp_path)).text.splitlines()

    assert lines[0] == f"@many is the directory {folder} (250 entries):"
    assert lines[1:201] == [f"f{index:03d}" for index in range(200)]
    assert lines[201:] == ["... and 50 more"]


def test_empty_directory_and_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "blank.txt").touch()

    listing, blank = mentions.enrich(turn("@empty @blank.txt", tmp_path))

    assert listing.text.endswith("(0 entries):\n(nothing to list)")
    assert blank.text == f"@blank.txt ({tmp_path / 'blank.txt'}) is an empty file."


def test_missing_path_says_where_it_looked(tmp_path: Path) -> None:
    block = only_block(mentions, turn("fix @foo.py", tmp_path))
    assert block.text == f"@foo.py: no such file or directory (looked at {tmp_path / 'foo.py'})"


def test_broken_symlink_is_named(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to(tmp_path / "gone")
    assert "broken symbolic link" in only_block(mentions, turn("@link", tmp_path)).text


def test_binary_file_is_never_dumped(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4)

    block = only_block(mentions, turn("@logo.png", tmp_path))

    assert (
        block.text
        == f"@logo.png ({tmp_path / 'logo.png'}) is a binary file of 1,040 bytes; its contents are not shown."
    )


def test_quoted_path_with_spaces(tmp_path: Path) -> None:
    (tmp_path / "my notes.txt").write_text("hello\n", encoding="utf-8")

    block = only_block(mentions, turn('summarise @"my notes.txt".', tmp_path))

    assert block.name == "file:my notes.txt"
    assert block.text.endswith("numbered like read_file:\n     1\thello")


def test_home_is_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("from home\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))

    block = only_block(mentions, turn("@~/notes.txt", tmp_path / "elsewhere"))

    assert block.name == "file:~/notes.txt"
    assert f"({home / 'notes.txt'}, 1 line)" in block.text and block.text.endswith("1\tfrom home")


def test_absolute_path_ignores_cwd(tmp_path: Path) -> None:
    target = tmp_path / "abs.txt"
    target.write_text("absolute\n", encoding="utf-8")

    block = only_block(mentions, turn(f"read @{target}, please", tmp_path / "nowhere"))

    assert block.name == f"file:{target}" and block.text.endswith("1\tabsolute")


def test_trailing_punctuation_is_not_part_of_the_path(tmp_path: Path) -> None:
    (tmp_path / "a.b.py").write_text("x = 1\n", encoding="utf-8")

    blocks = mentions.enrich(turn("Compare @a.b.py. Then (@a.b.py) again!", tmp_path))

    assert [block.name for block in blocks] == ["file:a.b.py"]
    assert blocks[0].text.endswith("1\tx = 1")


def test_user_typed_path_is_escaped_in_text_but_not_in_name(tmp_path: Path) -> None:
    block = only_block(mentions, turn("@<b>&x.txt", tmp_path))

    assert block.name == "file:<b>&x.txt"
    assert block.text.startswith("@&lt;b&gt;&amp;x.txt: no such file")
    assert 'name="file:&lt;b&gt;&amp;x.txt"' in block.render()


def test_at_most_ten_mentions_are_read(tmp_path: Path) -> None:
    text = " ".join(f"@f{index}.txt" for index in range(MAX_MENTIONS + 2))

    blocks = mentions.enrich(turn(text, tmp_path))

    assert [block.name for block in blocks[:-1]] == [f"file:f{index}.txt" for index in range(MAX_MENTIONS)]
    assert blocks[-1].name == "mentions_not_read" and blocks[-1].priority == P0
    assert blocks[-1].text.endswith(f"@f{MAX_MENTIONS}.txt, @f{MAX_MENTIONS + 1}.txt")


def test_utf16_and_latin1_files_are_decoded(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_bytes("héllo\r\nwörld\r\n".encode("utf-16"))
    (tmp_path / "old.txt").write_bytes("café crème\n".encode("latin-1"))

    wide, old = mentions.enrich(turn("@wide.txt @old.txt", tmp_path))

    assert wide.text.endswith("     1\théllo\n     2\twörld")
    assert old.text.endswith("     1\tcafé crème")


# --- caps ------------------------------------------------------------------------------------------------------


def test_long_file_is_cut_at_500_lines_with_how_to_read_on(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 601)), encoding="utf-8")

    text = only_block(mentions, turn("@long.txt", tmp_path)).text
    lines = text.splitlines()

    assert lines[0].endswith("600 lines), numbered like read_file:")
    assert lines[1] == "     1\tline 1" and lines[500] == "   500\tline 500"
    assert 'next_offset="501"' in lines[501] and "offset=501" in lines[501] and "of 600" in lines[501]
    assert len(lines) == 502


def test_file_of_exactly_500_lines_is_not_marked_cut(tmp_path: Path) -> None:
    (tmp_path / "even.txt").write_text("".join(f"{n}\n" for n in range(500)), encoding="utf-8")
    assert "truncated" not in only_block(mentions, turn("@even.txt", tmp_path)).text


def test_long_line_is_cut_and_the_next_line_still_shown(tmp_path: Path) -> None:
    (tmp_path / "wide.txt").write_text("x" * 5000 + "\nafter\n", encoding="utf-8")

    lines = only_block(mentions, turn("@wide.txt", tmp_path)).text.splitlines()

    assert lines[1] == "     1\t" + "x" * 2000 + CUT_MARKER
    assert lines[2] == "     2\tafter"
    assert len(lines) == 3


def test_output_is_capped_at_50_kb(tmp_path: Path) -> None:
    (tmp_path / "dense.txt").write_text("".join(f"{n:04d}" + "y" * 996 + "\n" for n in range(100)), encoding="utf-8")

    text = only_block(mentions, turn("@dense.txt", tmp_path)).text
    shown = [line for line in text.splitlines() if "\t" in line]

    assert len(text.encode()) < 52 * 1024
    assert 40 < len(shown) < 60
    assert f'next_offset="{len(shown) + 1}"' in text and "of 100" in text


def test_sparse_3_gb_file_is_streamed_not_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.log"
    with open(huge, "wb") as file:
        file.write(b"".join(b"log line %06d ........................................\n" % n for n in range(2000)))
        file.truncate(3 * 1024**3)

    text = only_block(mentions, turn("@huge.log", tmp_path)).text
    lines = text.splitlines()

    assert lines[0] == f"Contents of @huge.log ({huge}, 3,221,225,472 bytes), numbered like read_file:"
    assert lines[500] == "   500\tlog line 000499 ........................................"
    assert 'next_offset="501"' in lines[501] and "of " not in lines[501]


def test_sparse_3_gb_file_with_nul_bytes_up_front_is_binary(tmp_path: Path) -> None:
    huge = tmp_path / "huge.bin"
    with open(huge, "wb") as file:
        file.write(b"header\n")
        file.truncate(3 * 1024**3)

    text = only_block(mentions, turn("@huge.bin", tmp_path)).text

    assert text == f"@huge.bin ({huge}) is a binary file of 3,221,225,472 bytes; its contents are not shown."


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    found: list[list[ContextBlock]] = []

    worker = threading.Thread(target=lambda: found.append(mentions.enrich(turn("@pipe", tmp_path))), daemon=True)
    worker.start()
    worker.join(timeout=PATIENCE)

    assert not worker.is_alive(), "reading a mentioned fifo blocked"
    assert found[0][0].text.startswith(f"@pipe is a named pipe ({tmp_path / 'pipe'}), not a regular file")


def test_device_is_refused() -> None:
    text = describe("/dev/zero", Path("/"))
    assert text.startswith("@/dev/zero is a character device") and "not opened" in text


def test_unreadable_file_says_so_with_its_size(shared_dir: Path) -> None:  # noqa: F811 - pytest fixture
    secret = shared_dir / "secret.txt"
    secret.write_text("top secret\n", encoding="utf-8")
    secret.chmod(0o000)
    describe("warms-imports.txt", shared_dir)

    text = _describe_as_unprivileged("secret.txt", shared_dir)

    assert text == f"@secret.txt ({secret}, 11 bytes) cannot be read: permission denied"


def _describe_as_unprivileged(typed: str, cwd: Path) -> str:
    """describe() where file permissions apply: in a child process as `nobody` when we are root."""
    return run_as_nobody(lambda: describe(typed, cwd))


def test_same_input_gives_byte_identical_blocks(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("stable\n", encoding="utf-8")
    inp = turn("@a.txt @. @missing", tmp_path)
    assert mentions.enrich(inp) == mentions.enrich(inp)


# --- references --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("Can you fix that file?", "that file"),
        ("run the tests on THIS FILE", "THIS FILE"),
        ("rename those files", "those files"),
        ("why does that function fail", "that function"),
        ("now fix it", "it"),
        ("It's broken.", "It"),
        ("delete them", "them"),
        ("open the same file", "the same file"),
        ("undo the previous one", "the previous one"),
        ("把那个文件改一下", "那个文件"),
        ("这个文件有问题", "这个文件"),
        ("该文件太长", "该文件"),
        ("它们都要删掉", "它们"),
        ("再运行它", "它"),
        ("上面的代码不对", "上面的"),
        ("刚才的修改撤回", "刚才的"),
        ("改一下it", "it"),
    ],
)
def test_reference_phrases_are_found(text: str, phrase: str) -> None:
    assert find_reference(text) == phrase


@pytest.mark.parametrize(
    "text", ["edit main.py", "add an item", "use the kit", "iterate with itertools", "write a new file", "其它文件"]
)
def test_words_that_merely_contain_a_phrase_are_not_references(text: str) -> None:
    assert find_reference(text) is None


def test_reference_lists_recent_files_newest_first(tmp_path: Path) -> None:
    recent = tuple(tmp_path / f"f{index}.py" for index in range(7)) + (Path("/etc/hosts"),)

    block = only_block(references, turn("please fix that file", tmp_path, (recent[0], *recent)))

    assert block.name == "recent_files" and block.priority == P1
    assert block.text.splitlines() == [
        'The message refers to something earlier ("that file"); files most recently read or changed, newest first:',
        "f0.py",
        "f1.py",
        "f2.py",
        "f3.py",
        "f4.py",
    ]


def test_reference_outside_cwd_keeps_the_absolute_path(tmp_path: Path) -> None:
    block = only_block(references, turn("它在哪里", tmp_path / "proj", (tmp_path / "other" / "x.py",)))
    assert block.text.splitlines()[1:] == [str(tmp_path / "other" / "x.py")]
    assert '("它")' in block.text


def test_reference_skips_say_why(tmp_path: Path) -> None:
    assert skip_reason(references, turn("edit main.py", tmp_path, (tmp_path / "a",))) == (
        "no reference to an earlier object"
    )
    assert skip_reason(references, turn("fix it", tmp_path)) == (
        "refers to an earlier object but no file has been read or changed yet"
    )


# --- urls --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see https://example.com.", ["https://example.com"]),
        ("see https://example.com/a, and http://x.org/b!", ["https://example.com/a", "http://x.org/b"]),
        ("(see https://example.com/page)", ["https://example.com/page"]),
        ("https://en.wikipedia.org/wiki/Foo_(bar)", ["https://en.wikipedia.org/wiki/Foo_(bar)"]),
        ("(https://en.wikipedia.org/wiki/Foo_(bar)).", ["https://en.wikipedia.org/wiki/Foo_(bar)"]),
        ("[docs](https://docs.python.org/3/)", ["https://docs.python.org/3/"]),
        ("<https://a.io/x> and 'https://b.io/y'", ["https://a.io/x", "https://b.io/y"]),
        ("HTTPS://EXAMPLE.COM/X twice HTTPS://EXAMPLE.COM/X", ["HTTPS://EXAMPLE.COM/X"]),
        ("见https://例子.cn/路径。谢谢", ["https://例子.cn/路径"]),
        ("not `https://in.code/x` nor ```\nhttps://in.fence\n```", []),
        ("ftp://x.org, http://, https://?q and xhttps://y.org", []),
    ],
)
def test_find_urls(text: str, expected: list[str]) -> None:
    assert find_urls(text) == expected


def test_url_block_lists_escaped_urls(tmp_path: Path) -> None:
    block = only_block(urls, turn("compare https://a.io/?x=1&y=2 with https://b.io.", tmp_path))

    assert block.name == "urls" and block.priority == P2
    assert block.text == "URLs in the message (web_fetch can read them):\nhttps://a.io/?x=1&amp;y=2\nhttps://b.io"


def test_no_urls_is_skipped(tmp_path: Path) -> None:
    assert skip_reason(urls, turn("nothing to fetch in `https://x.io`", tmp_path)) == "no URLs"


# --- invariants --------------------------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    ["@", "@a.txt", "@dir/", '@"sp ace.txt"', "@~/x", "`", "```", "it", "那个文件", "https://x.io/(a)", ".", ")", " "]
)
_MESSAGES = st.one_of(st.text(), st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=30).map("".join))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_MESSAGES)
def test_enrichers_only_skip_and_never_change_the_input(tmp_path: Path, text: str) -> None:
    (tmp_path / "dir").mkdir(exist_ok=True)
    (tmp_path / "a.txt").write_text("a\n", encoding="utf-8")
    inp = turn(text, tmp_path, (tmp_path / "a.txt",))
    names: list[str] = []
    for enricher in (mentions, references, urls):
        try:
            names += [block.name for block in enricher.enrich(inp)]
        except Skip:
            pass
    assert inp.text == text
    assert len(names) == len(set(names))


def test_default_enrichers_in_order() -> None:
    from mini_agent.context.enrich import default_enrichers, timeexpr

    enrichers = default_enrichers()

    assert enrichers == [mentions, timeexpr.time_expressions, references, urls]
    assert [enricher.name for enricher in enrichers][::2] == ["mentions", "references"]
    assert not mentions.inline and references.inline and urls.inline


def test_a_resource_mention_is_left_to_the_mcp_enricher_and_a_path_with_a_colon_is_not_one(tmp_path):
    from mini_agent.context.enrich.mcp_mentions import resource_mentions

    text = "see @docs:notes://readme and @src/a.py:10 and @x:y"
    assert resource_mentions(text) == [("docs", "notes://readme")]
    blocks = mentions.enrich(turn(text, tmp_path))
    assert [block.name for block in blocks] == ["file:src/a.py:10", "file:x:y"]
