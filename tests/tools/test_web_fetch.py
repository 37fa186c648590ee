"""web_fetch against a real HTTP server on 127.0.0.1: real saved pages, redirects, limits, charsets, paging,
the cache, the failures the agent must tell apart (server errors vs network errors), and the destination check
that keeps fetches away from loopback, private and metadata addresses unless approved."""

from __future__ import annotations

import gzip
import importlib
import re
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.web_server import RequestHandler, Response, WebServer  # tests/ is on sys.path (conftest.py)

from mini_agent.tools.base import ToolContext, ToolError, ToolRegistry, ToolResult
from mini_agent.tools.web_fetch import web_fetch

web_fetch_module = importlib.import_module("mini_agent.tools.web_fetch")
web_connect = importlib.import_module("mini_agent.tools.web_connect")
REGISTRY = ToolRegistry([web_fetch])
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "html"
HINT = re.compile(
    r'\n\n<system_hint type="truncated" shown="(\d+)-(\d+)" total="(\d+)" next_offset="(\d+)">[^<]*</system_hint>$'
)
MB = 1024 * 1024


@pytest.fixture(autouse=True)
def empty_cache():
    web_fetch_module.clear_cache()
    yield
    web_fetch_module.clear_cache()


@pytest.fixture
def server():
    with WebServer() as running:
        yield running


def fetch(url: str, **arguments: object) -> ToolResult:
    return REGISTRY.call("web_fetch", {"url": url, **arguments}, ToolContext(cwd=Path.cwd()))


@dataclass
class Part:
    """One call's result, split into its header fields, its content and its truncation hint (if any)."""

    header: dict[str, str]
    content: str
    next_offset: int | None
    total: int | None


def parse(result: ToolResult) -> Part:
    assert not result.is_error, result.content
    header_text, _, rest = result.content.partition("\n\n")
    header = dict(line.split(": ", 1) for line in header_text.splitlines())
    hint = HINT.search(rest)
    if hint is None:
        assert "<system_hint" not in rest
        return Part(header, rest, None, None)
    return Part(header, rest[: hint.start()], int(hint.group(4)), int(hint.group(3)))


def fetch_whole(url: str) -> str:
    """Every part of a page, following the truncation hints."""
    parts = [parse(fetch(url))]
    while parts[-1].next_offset is not None:
        parts.append(parse(fetch(url, offset=parts[-1].next_offset)))
    return "\n".join(part.content for part in parts)


# --- real pages -------------------------------------------------------------------------------------------

PAGES = {
    "daringfireball-1": "Daring Fireball: Colophon",
    "google-sre-book-1": "Google - Site Reliability Engineering",
    "ietf-1": "draft-dejong-remotestorage-04 - remoteStorage",
    "keep-tabular-data": "Friday Facts #282 - 0.17 in sight | Factorio",
    "lwn-1": "LWN.net Weekly Edition for March 26, 2015 [LWN.net]",
    "mercurial": "Evolve: Shared Mutable History — evolve extension for Mercurial",
    "v8-blog": "Outside the web: standalone WebAssembly binaries using Emscripten · V8",
    "wikipedia": "Mozilla - Wikipedia",
}
LINK_TARGET = re.compile(r"\]\((?:[^()\s]|\([^()]*\))*(?: \"[^\"]*\")?\)")


def fixture_file(name: str, suffix: str) -> Path:
    return FIXTURES / f"readability__{name}.{suffix}"


@pytest.fixture
def site(server):
    """The saved pages served as text/html without a charset (so meta tags or UTF-8 detection decide)."""
    for name in PAGES:
        server.add(f"/{name}/page.html", fixture_file(name, "source.html").read_bytes())
    return server


def page_markdown(site: WebServer, name: str) -> str:
    return fetch_whole(site.url(f"/{name}/page.html"))


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


@pytest.mark.parametrize("name", PAGES)
def test_a_real_page_starts_with_its_title_and_keeps_the_article_text(site, name):
    from bs4 import BeautifulSoup

    markdown = page_markdown(site, name)
    assert markdown.startswith(f"# {PAGES[name]}\n\n")
    prose = " " + " ".join(words(LINK_TARGET.sub("]", markdown))) + " "
    expected = BeautifulSoup(fixture_file(name, "expected.html").read_text(encoding="utf-8"), "html.parser")
    blocks = [words(block.get_text(" ")) for block in expected.find_all(["p", "pre"])]
    openings = [" " + " ".join(block[:8]) + " " for block in blocks if len(block) >= 8]
    missing = [opening for opening in openings if opening not in prose]
    assert len(openings) >= 5
    assert len(missing) <= len(openings) // 20, missing[:5]


@pytest.mark.parametrize("name", PAGES)
def test_scripts_styles_and_markup_are_gone(site, name):
    from bs4 import BeautifulSoup

    markdown = page_markdown(site, name)
    source = BeautifulSoup(fixture_file(name, "source.html").read_text(encoding="utf-8"), "html.parser")
    code_lines = [
        line.strip()
        for element in source.find_all(["script", "style"])
        for line in element.get_text().splitlines()
        if len(line.strip()) >= 25
    ]
    leaked = [line for line in code_lines if line in markdown]
    assert leaked == []
    assert not re.search(r"</?(script|style|div|span|p|table|nav)\b", markdown, re.IGNORECASE)


def test_navigation_chrome_is_dropped_but_the_chapter_kept(site):
    markdown = page_markdown(site, "google-sre-book-1")
    # the book's table-of-contents menu and the previous/next footer
    for chrome in (
        "Table of Contents",
        "Part I - Introduction",
        "7. The Evolution of Automation at Google",
        "Previous Chapter",
        "Next Chapter",
    ):
        assert chrome not in markdown
    assert "\n# Monitoring Distributed Systems\n" in markdown
    assert "# Black-Box Versus White-Box" in markdown


def test_site_header_and_footer_go_but_the_article_header_and_footer_stay(site):
    markdown = page_markdown(site, "v8-blog")
    assert "Show navigation" not in markdown
    assert "Branding" not in markdown and "Edit this page on GitHub" not in markdown
    assert "Published 21 November 2019" in markdown  # <header> inside <article>
    assert "Posted by Alon Zakai." in markdown  # <footer> inside <article>


def test_headings_are_atx_style(site):
    v8 = page_markdown(site, "v8-blog")
    assert "\n## Using standalone mode in Emscripten\n" in v8
    assert "\n### Write your own JavaScript loader\n" in v8
    assert not re.search(r"^(=+|-{3,})$", v8, re.MULTILINE)  # no setext underlines


def test_links_survive_and_relative_ones_become_absolute(site):
    v8 = page_markdown(site, "v8-blog")
    assert "[WASI](https://github.com/WebAssembly/WASI)" in v8
    assert f"[WebAssembly]({site.url('/blog/tags/webassembly')})" in v8
    mercurial = page_markdown(site, "mercurial")
    assert "¶" not in mercurial  # Sphinx permalink anchors are noise


def test_lists_survive(site):
    colophon = page_markdown(site, "daringfireball-1")
    assert "## Mac Apps\n\n- [BBEdit](http://www.barebones.com/products/bbedit/)\n- [Acorn]" in colophon
    sre = page_markdown(site, "google-sre-book-1")
    assert re.search(r"^1\. \S", sre, re.MULTILINE)


def test_data_tables_become_markdown_tables(site):
    factorio = page_markdown(site, "keep-tabular-data")
    assert re.search(r"^\|\s*\|\s*General\sUX\s*\|\s*UX\sdraft\s*\|", factorio, re.MULTILINE)
    assert re.search(r"^\| --- \| --- \|", factorio, re.MULTILINE)
    assert re.search(r"^\| Load\smap \| fff-277-finished-2 \|", factorio, re.MULTILINE)  # status icons named
    wikipedia = page_markdown(site, "wikipedia")
    assert re.search(r"^\| Industry \| \[Open-source software\]\(", wikipedia, re.MULTILINE)
    sre = page_markdown(site, "google-sre-book-1")
    assert "| **My responses are slow** | CPUs are overloaded by a bogosort" in sre


def test_layout_tables_do_not_flatten_the_article(site):
    lwn = page_markdown(site, "lwn-1")
    assert "\n## [A trademark battle in the Arduino community](" in lwn
    assert not any(len(line) > 5000 for line in lwn.splitlines())


def fenced_blocks(markdown: str) -> list[tuple[str, str]]:
    return re.findall(r"^(`{3,})([\w+#.-]*)\n(.*?)\n\1$", markdown, re.MULTILINE | re.DOTALL)


def test_code_blocks_are_fenced_with_their_language(site):
    v8 = fenced_blocks(page_markdown(site, "v8-blog"))
    assert len(v8) == 10
    languages = [language for _, language, _ in v8]
    assert {"c", "cpp", "js", "lisp"} <= set(languages)
    add_c = next(code for _, language, code in v8 if language == "c")
    assert add_c == (
        "// add.c\n#include <emscripten.h>\n\nEMSCRIPTEN_KEEPALIVE\nint add(int x, int y) {\n  return x + y;\n}"
    )
    mercurial = fenced_blocks(page_markdown(site, "mercurial"))
    assert len(mercurial) == 46
    assert any("$ hg log -G -q -r 'head()'" in code for _, _, code in mercurial)


FILLER = "Plenty of ordinary article prose fills this paragraph so it dominates the page. " * 6
CHROME_PAGE = f"""<!DOCTYPE html><html><head><title>Chrome</title></head><body>
<div class="skip-link"><a href="#content">SkipLink</a></div>
<header><a href="/">SiteLogo</a><ul class="topMenu"><li><a href="/a">MenuEntry</a></li></ul></header>
<nav><a href="/docs">NavDocs</a></nav>
<div role="banner">BannerRole</div><div role="navigation">NavigationRole</div>
<div id="cookie_consent">CookieBanner</div>
<div class="left-sidebar">SidebarBox</div><aside>PageAside</aside><div class="breadcrumbs">Crumbs</div>
<article>
  <header><h1>Article Title</h1><p>ArticleByline</p></header>
  <p>First paragraph of the article.</p><aside>ArticleAside</aside>
  <footer>ArticleFooter</footer>
</article>
<div class="has-sidebar"><p>WrapperText {FILLER}</p></div>
<div class="menus-of-the-day">SoupOfTheDay</div>
<div role="contentinfo">ContentInfoRole</div><div class="site-footer">FooterClass</div><footer>SiteFooter</footer>
</body></html>"""
CHROME = [
    "SkipLink",
    "SiteLogo",
    "MenuEntry",
    "NavDocs",
    "BannerRole",
    "NavigationRole",
    "CookieBanner",
    "SidebarBox",
    "PageAside",
    "Crumbs",
    "ContentInfoRole",
    "FooterClass",
    "SiteFooter",
]
CONTENT = [
    "# Article Title",
    "ArticleByline",
    "First paragraph",
    "ArticleAside",
    "ArticleFooter",
    "WrapperText",
    "SoupOfTheDay",
]


def test_page_chrome_goes_and_article_content_stays(server):
    markdown = parse(fetch(server.add("/chrome", CHROME_PAGE))).content
    assert [chrome for chrome in CHROME if chrome in markdown] == []
    assert [content for content in CONTENT if content not in markdown] == []


def test_only_the_main_region_is_kept_when_it_holds_the_text(server):
    page = f"""<title>M</title><div class="intro">OutsideMain</div>
    <main><p>{FILLER}</p><div class="post-sidebar">InnerSidebar</div></main><div>AlsoOutside</div>"""
    markdown = parse(fetch(server.add("/main", page))).content
    assert FILLER.strip() in markdown
    assert "OutsideMain" not in markdown and "AlsoOutside" not in markdown and "InnerSidebar" not in markdown


def test_a_small_mislabelled_main_does_not_hide_the_page(server):
    markdown = parse(fetch(server.add("/tiny-main", f"<main>TinyMain</main><div><p>{FILLER}</p></div>"))).content
    assert "TinyMain" in markdown and FILLER.strip() in markdown


def test_main_content_is_never_dropped_with_a_chrome_named_wrapper(server):
    page = "<div class='sidebar'><main>FirstMain</main></div><main>SecondMain</main><div class='menu'>Menu</div>"
    markdown = parse(fetch(server.add("/mains", page))).content
    assert "FirstMain" in markdown and "SecondMain" in markdown and "Menu" not in markdown


# --- redirects --------------------------------------------------------------------------------------------


def test_redirects_are_followed_and_the_final_url_reported(server):
    server.add("/end", "arrived", content_type="text/plain")
    server.redirect("/middle", "/end", status=301)
    start = server.redirect("/start", server.url("/middle"))
    part = parse(fetch(start))
    assert part.header["URL"] == start
    assert part.header["Final URL"] == server.url("/end")
    assert part.content == "arrived"


def test_no_final_url_line_without_a_redirect(server):
    part = parse(fetch(server.add("/plain", "hello", content_type="text/plain")))
    assert "Final URL" not in part.header
    assert part.header["Content-Type"] == "text/plain"


def redirect_chain(server: WebServer, length: int) -> str:
    server.add(f"/hop{length}", "the end", content_type="text/plain")
    for hop in range(length):
        server.redirect(f"/hop{hop}", f"/hop{hop + 1}")
    return server.url("/hop0")


def test_ten_redirects_are_allowed(server):
    assert parse(fetch(redirect_chain(server, 10))).content == "the end"


def test_more_than_ten_redirects_is_an_error(server):
    result = fetch(redirect_chain(server, 11))
    assert result.is_error and not result.network_error
    assert "Too many redirects" in result.content and "10" in result.content


def test_a_redirect_to_another_scheme_is_refused(server):
    result = fetch(server.redirect("/away", "ftp://127.0.0.1/file.txt"))
    assert result.is_error and not result.network_error


# --- HTTP errors, sizes and content types -----------------------------------------------------------------


def test_404_is_an_error_with_status_reason_and_a_body_snippet(server):
    result = fetch(server.url("/missing"))
    assert result.is_error and not result.network_error
    assert "HTTP 404 Not Found" in result.content
    assert "No page here" in result.content and "color: red" not in result.content


def test_500_is_an_error_not_a_network_failure(server):
    result = fetch(server.add("/broken", "database on fire", status=500, content_type="text/plain"))
    assert result.is_error and not result.network_error
    assert "HTTP 500 Internal Server Error" in result.content and "database on fire" in result.content


def test_a_body_declared_over_10_mb_is_refused_before_downloading(server, monkeypatch):
    # The server sends the headers and then stalls: only refusing on Content-Length avoids the timeout.
    monkeypatch.setattr(web_fetch_module, "READ_TIMEOUT", 10.0)

    def huge(request: RequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.send_header("Content-Length", str(11 * MB))
        request.end_headers()
        request.wfile.write(b"x" * 1000)
        request.wait_for_shutdown(30)

    result = fetch(server.route("/huge", huge))
    assert result.is_error and not result.network_error
    assert "11,534,336 bytes" in result.content and "10 MB" in result.content


def chunked(chunks) -> callable:
    def handler(request: RequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.send_header("Transfer-Encoding", "chunked")
        request.end_headers()
        for chunk in chunks():
            request.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            request.wfile.flush()
        request.wfile.write(b"0\r\n\r\n")

    return handler


def test_a_streamed_body_over_10_mb_is_refused(server):
    result = fetch(server.route("/endless", chunked(lambda: (b"y" * 65536 for _ in range(12 * 16)))))
    assert result.is_error and not result.network_error
    assert "10 MB" in result.content and "stopped after" in result.content


def test_a_streamed_body_under_the_limit_is_read_whole(server):
    part = parse(fetch(server.route("/stream", chunked(lambda: (b"line\n" for _ in range(1000))))))
    assert part.content == "line\n" * 1000


@pytest.mark.parametrize("content_type", ["image/png", "application/pdf", "application/octet-stream"])
def test_binary_content_types_are_refused_by_name(server, content_type):
    result = fetch(server.add("/file", b"\x89PNG\r\n\x1a\n\x00\x00", content_type=content_type))
    assert result.is_error and not result.network_error
    assert f"'{content_type}'" in result.content


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/json", '{"name": "mini-agent", "tools": ["web_fetch"], "html": "<b>not converted</b>"}'),
        ("application/vnd.api+json; charset=utf-8", '{"data": []}'),
        ("application/xml", '<?xml version="1.0"?><feed><entry>one</entry></feed>'),
        ("application/atom+xml", "<feed><title>news</title></feed>"),
        ("text/csv", "name,size\nweb_fetch,1\n"),
        ("text/markdown; charset=utf-8", "# Title\n\n- item with `code`\n"),
        ("text/plain; charset=utf-8", "naïve café ✓\n\tindented\n"),
    ],
)
def test_text_formats_come_back_as_they_are(server, content_type, body):
    part = parse(fetch(server.add("/data", body, content_type=content_type)))
    assert part.content == body
    assert part.header["Content-Type"] == content_type


def test_a_gzip_encoded_response_is_decoded(server):
    url = server.add(
        "/zipped", gzip.compress(b"compressed words"), content_type="text/plain", headers={"Content-Encoding": "gzip"}
    )
    assert parse(fetch(url)).content == "compressed words"


def test_without_a_content_type_html_is_recognised_and_binary_refused(server):
    html = server.add(
        "/html", "<!DOCTYPE html><html><head><title>Bare</title></head><body><p>Hi</p></body></html>", content_type=""
    )
    assert parse(fetch(html)).content == "# Bare\n\nHi\n"
    result = fetch(server.add("/blob", b"\x00\x01\x02binary", content_type=""))
    assert result.is_error and "binary" in result.content


def test_an_empty_response_says_so(server):
    assert "no text content" in parse(fetch(server.add("/empty", "", content_type="text/plain"))).content


def test_a_page_built_by_javascript_gets_a_note(server):
    url = server.add(
        "/app", "<html><head><title>App</title><script>render()</script></head><body><div id=root></div></body></html>"
    )
    assert "JavaScript" in parse(fetch(url)).header["Note"]


# --- character sets ---------------------------------------------------------------------------------------

FRENCH = "Le cœur a ses raisons que la raison ne connaît point. Déjà vu, café crème, à la française. « Oui » !"
CHINESE = "中文网页的编码测试：汉字、标点符号和数字１２３都应该正确显示。"


def test_a_latin_1_page_is_decoded_with_the_header_charset(server):
    latin_1 = FRENCH.replace("œ", "oe")
    url = server.add("/fr", f"<p>{latin_1}</p>".encode("iso-8859-1"), content_type="text/html; charset=iso-8859-1")
    assert latin_1 in parse(fetch(url)).content


def test_a_latin_1_label_decodes_windows_1252_characters_as_browsers_do(server):
    body = FRENCH.encode("cp1252")  # œ is 0x9c: a cp1252-only byte under a latin-1 label
    assert parse(fetch(server.add("/fr.txt", body, content_type="text/plain; charset=ISO-8859-1"))).content == FRENCH


def test_a_gbk_page_is_decoded_with_the_header_charset(server):
    body = f"<html><body><p>{CHINESE}</p></body></html>".encode("gbk")
    assert CHINESE in parse(fetch(server.add("/zh", body, content_type="text/html; charset=gbk"))).content


def test_a_page_without_header_charset_uses_its_meta_charset(server):
    meta = '<meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
    body = f"<html><head>{meta}</head><body><p>{CHINESE}</p>".encode("gbk")
    assert CHINESE in parse(fetch(server.add("/zh-meta", body, content_type="text/html"))).content


def test_a_declared_meta_charset_beats_guessing(server):
    # These cp1252 bytes happen to be valid UTF-8 too ("été"); the page's own declaration decides.
    body = '<meta charset="windows-1252"><p>Ã©tÃ©</p>'.encode("cp1252")
    assert "Ã©tÃ©" in parse(fetch(server.add("/declared", body, content_type="text/html"))).content


def test_the_header_charset_beats_the_meta_charset(server):
    body = f'<meta charset="gbk"><p>{FRENCH}</p>'.encode()
    assert FRENCH in parse(fetch(server.add("/both", body, content_type="text/html; charset=utf-8"))).content


def test_text_without_any_charset_is_detected(server):
    body = ("\n".join([FRENCH] * 20)).encode("cp1252")
    assert parse(fetch(server.add("/fr-bare.txt", body, content_type="text/plain"))).content.startswith(FRENCH)


# --- paging and the cache ---------------------------------------------------------------------------------

LINES = [f"line {number:05d} " + "lorem ipsum dolor sit amet " * (number % 5) for number in range(2500)]
LONG_TEXT = "\n".join(LINES) + "\n"


def test_a_long_page_comes_in_parts_served_from_the_cache(server):
    url = server.add("/long.txt", LONG_TEXT, content_type="text/plain")
    parts = [parse(fetch(url))]
    while parts[-1].next_offset is not None:
        assert parts[-1].total == len(LONG_TEXT)
        parts.append(parse(fetch(url, offset=parts[-1].next_offset)))
    assert server.hits["/long.txt"] == 1
    assert len(parts) >= 3
    assert all(len(part.content) <= 40_000 for part in parts)
    assert [line for part in parts for line in part.content.splitlines()] == LINES  # whole lines, each once
    second = parts[1]
    assert second.content.startswith(LONG_TEXT[parts[0].next_offset :][:50])
    assert second.header["Characters"] == f"{parts[0].next_offset}-{parts[1].next_offset} of {len(LONG_TEXT)}"


def test_an_offset_past_the_end_is_an_error_naming_the_length(server):
    url = server.add("/short.txt", "short text", content_type="text/plain")
    result = fetch(url, offset=10)
    assert result.is_error and not result.network_error
    assert "10 characters" in result.content


def test_a_negative_offset_is_rejected_by_validation(server):
    result = fetch(server.add("/short.txt", "short text", content_type="text/plain"), offset=-1)
    assert result.is_error and "offset" in result.content
    assert server.hits["/short.txt"] == 0


def test_the_cache_expires(server, monkeypatch):
    url = server.add("/page.txt", "text", content_type="text/plain")
    fetch(url)
    fetch(url)
    assert server.hits["/page.txt"] == 1
    monkeypatch.setattr(web_fetch_module, "CACHE_TTL", -1.0)
    fetch(url)
    assert server.hits["/page.txt"] == 2


def test_the_cache_keeps_only_the_most_recent_pages(server, monkeypatch):
    monkeypatch.setattr(web_fetch_module, "CACHE_ENTRIES", 2)
    urls = {name: server.add(f"/{name}", name, content_type="text/plain") for name in ("a", "b", "c")}
    for name in ("a", "b", "c", "c", "a"):
        fetch(urls[name])
    assert (server.hits["/a"], server.hits["/b"], server.hits["/c"]) == (2, 1, 1)


def test_errors_are_not_cached(server):
    fetch(server.url("/later"))
    server.add("/later", "now here", content_type="text/plain")
    assert parse(fetch(server.url("/later"))).content == "now here"


@settings(max_examples=60, deadline=None)
@given(text=st.text(alphabet="ab \n", max_size=400), page_chars=st.integers(min_value=1, max_value=120))
def test_following_the_hints_reads_every_character_once(text, page_chars):
    page = web_fetch_module.Page("http://h/", "http://h/", "text/plain", text, time.monotonic())
    offset, seen = 0, ""
    original = web_fetch_module.PAGE_CHARS
    web_fetch_module.PAGE_CHARS = page_chars
    try:
        while True:
            rendered = web_fetch_module._render(page, offset)
            hint = re.search(r'shown="(\d+)-(\d+)" total="\d+" next_offset="(\d+)"', rendered)
            end = int(hint.group(3)) if hint else len(text)
            assert 0 < end - offset <= page_chars or not text
            seen += text[offset:end]
            if hint is None:
                break
            offset = end
    finally:
        web_fetch_module.PAGE_CHARS = original
    assert seen == text


# --- refused URLs and network failures --------------------------------------------------------------------


@pytest.mark.parametrize(("url", "scheme"), [("ftp://127.0.0.1/pub/file.txt", "ftp"), ("file:///etc/hostname", "file")])
def test_other_schemes_are_refused_by_name(url, scheme):
    result = fetch(url)
    assert result.is_error and not result.network_error
    assert f"'{scheme}:'" in result.content


def test_file_urls_point_to_read_file():
    assert "read_file" in fetch("file:///etc/hostname").content


@pytest.mark.parametrize("url", ["example.com/docs", "localhost:8000/api"])
def test_a_url_without_scheme_suggests_one(url):
    result = fetch(url)
    assert result.is_error and not result.network_error
    assert f"https://{url}" in result.content


@pytest.mark.parametrize("url", ["http://", "http://[::1/x", "https:///path-only"])
def test_malformed_urls_are_explained_not_crashed_on(url):
    result = fetch(url)
    assert result.is_error and not result.network_error
    assert "unexpectedly" not in result.content


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_connection_refused_is_a_network_error():
    result = fetch(f"http://127.0.0.1:{closed_port()}/")
    assert result.is_error and result.network_error
    assert "refused" in result.content


def test_a_server_that_never_answers_times_out_as_a_network_error(server, monkeypatch):
    monkeypatch.setattr(web_fetch_module, "READ_TIMEOUT", 0.5)
    result = fetch(server.route("/hang", lambda request: request.wait_for_shutdown(30)))
    assert result.is_error and result.network_error
    assert "Timed out" in result.content


def test_a_body_that_stops_midway_times_out_as_a_network_error(server, monkeypatch):
    monkeypatch.setattr(web_fetch_module, "READ_TIMEOUT", 0.5)

    def stall(request: RequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Type", "text/plain")
        request.send_header("Content-Length", "100")
        request.end_headers()
        request.wfile.write(b"only ten b")
        request.wfile.flush()
        request.wait_for_shutdown(30)

    result = fetch(server.route("/stall", stall))
    assert result.is_error and result.network_error


def test_a_trickling_download_hits_the_total_timeout(server, monkeypatch):
    monkeypatch.setattr(web_fetch_module, "TOTAL_TIMEOUT", 0.3)

    def trickle():
        for _ in range(100):
            yield b"."
            time.sleep(0.05)

    result = fetch(server.route("/trickle", chunked(trickle)))
    assert result.is_error and result.network_error
    assert "took longer" in result.content


# --- destinations: loopback, private and metadata addresses need approval -------------------------------


@dataclass
class Destinations:
    """A check_destination that records every call and refuses the hosts named in `refuse` ("*": all)."""

    refuse: tuple[str, ...] = ()
    calls: list[tuple[str, str, str]] = field(default_factory=list)

    def __call__(self, url: str, host: str, reason: str) -> None:
        self.calls.append((url, host, reason))
        if "*" in self.refuse or host in self.refuse:
            raise ToolError(f"Not fetched: {reason}.")


def fetch_checked(url: str, check: Destinations) -> ToolResult:
    return REGISTRY.call("web_fetch", {"url": url}, ToolContext(cwd=Path.cwd(), check_destination=check))


class Names:
    """Host names of our own, answered in place of DNS (`names.table["public.example"] = ["127.0.0.1"]`)."""

    def __init__(self) -> None:
        self.table: dict[str, list[str]] = {}
        self.lookups: list[str] = []

    def resolve(self, host: str, port: int) -> list[str]:
        self.lookups.append(host)
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.table[host]


@pytest.fixture
def names(monkeypatch):
    names = Names()
    monkeypatch.setattr(web_connect, "resolve", names.resolve)
    return names


def port_of(server: WebServer) -> int:
    return int(server.url("").rsplit(":", 1)[1])


def test_a_refused_loopback_address_gets_no_request(server):
    check = Destinations(refuse=("*",))
    url = server.add("/page", "secret", content_type="text/plain")
    result = fetch_checked(url, check)
    assert result.is_error and not result.network_error
    assert result.content == "Not fetched: 127.0.0.1 is a loopback address."
    assert check.calls == [(url, "127.0.0.1", "127.0.0.1 is a loopback address")]
    assert server.hits["/page"] == 0


def test_an_approved_address_is_fetched_as_before(server):
    check = Destinations()
    url = server.add("/page", "hello", content_type="text/plain")
    assert parse(fetch_checked(url, check)).content == "hello"
    assert check.calls == [(url, "127.0.0.1", "127.0.0.1 is a loopback address")]


@pytest.mark.parametrize("spelling", ["127.1", "2130706433", "0x7f.0.0.1", "localhost"])
def test_other_spellings_of_loopback_are_caught_after_resolution(server, spelling):
    check = Destinations(refuse=("*",))
    url = server.add("/page", "secret", content_type="text/plain").replace("127.0.0.1", spelling)
    result = fetch_checked(url, check)
    assert result.is_error and "loopback" in result.content
    assert [host for _, host, _ in check.calls] == [spelling]
    assert server.hits["/page"] == 0


def test_a_public_name_resolving_to_loopback_is_caught_after_resolution(server, names):
    names.table["public.example"] = ["127.0.0.1"]
    check = Destinations(refuse=("public.example",))
    url = f"http://public.example:{port_of(server)}/page"
    server.add("/page", "secret", content_type="text/plain")
    result = fetch_checked(url, check)
    assert result.is_error and not result.network_error
    assert check.calls == [(url, "public.example", "public.example resolves to 127.0.0.1, a loopback address")]
    assert server.hits["/page"] == 0


def test_the_vetted_address_is_the_one_connected_to_and_the_host_header_stays_the_name(server, names):
    names.table["public.example"] = ["127.0.0.1"]

    def echo_host(request: RequestHandler) -> None:
        body = request.headers["Host"].encode()
        request.send_fixed(Response(body, 200, {"Content-Type": "text/plain"}))

    server.route("/host", echo_host)
    url = f"http://public.example:{port_of(server)}/host"
    assert parse(fetch_checked(url, Destinations())).content == f"public.example:{port_of(server)}"
    assert names.lookups == ["public.example"]  # resolved once, by web_fetch; the connection used that answer


def test_each_address_of_a_name_is_vetted_until_one_connects(server, names):
    names.table["public.example"] = ["::1", "127.0.0.1"]  # the server listens on 127.0.0.1 only
    check = Destinations()
    url = server.add("/page", "hello", content_type="text/plain").replace("127.0.0.1", "public.example")
    assert parse(fetch_checked(url, check)).content == "hello"
    assert [reason for _, _, reason in check.calls] == [
        "public.example resolves to ::1, a loopback address",
        "public.example resolves to 127.0.0.1, a loopback address",
    ]


def test_a_refused_address_ends_the_fetch_without_asking_about_the_others(server, names):
    names.table["public.example"] = ["127.0.0.1", "::1"]
    check = Destinations(refuse=("*",))
    url = server.add("/page", "secret", content_type="text/plain").replace("127.0.0.1", "public.example")
    assert fetch_checked(url, check).is_error
    assert len(check.calls) == 1 and server.hits["/page"] == 0


def test_a_name_that_does_not_resolve_is_a_dns_network_error(names):
    result = fetch_checked("http://nowhere.example/", Destinations())
    assert result.is_error and result.network_error
    assert "DNS lookup failed" in result.content


def test_a_redirect_to_a_flagged_host_asks_again_and_can_be_refused(names):
    names.table["a.example"] = names.table["b.example"] = ["127.0.0.1"]
    with WebServer() as first, WebServer() as second:
        second.add("/secret", "secret", content_type="text/plain")
        target = f"http://b.example:{port_of(second)}/secret"
        start = f"http://a.example:{port_of(first)}/start"
        first.redirect("/start", target)
        check = Destinations(refuse=("b.example",))
        result = fetch_checked(start, check)
        assert result.is_error and not result.network_error
        assert check.calls == [
            (start, "a.example", "a.example resolves to 127.0.0.1, a loopback address"),
            (target, "b.example", "b.example resolves to 127.0.0.1, a loopback address"),
        ]
        assert (first.hits["/start"], second.hits["/secret"]) == (1, 0)


@pytest.mark.parametrize(
    ("location", "host", "risk"),
    [
        ("http://10.0.0.5/admin", "10.0.0.5", "a private network address"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "a cloud metadata address"),
        ("http://[::ffff:a9fe:a9fe]/", "::ffff:a9fe:a9fe", "a cloud metadata address"),
    ],
)
def test_a_redirect_to_an_internal_address_is_refused_before_connecting(server, location, host, risk):
    check = Destinations(refuse=(host,))
    result = fetch_checked(server.redirect("/away", location), check)
    assert result.is_error and not result.network_error
    assert check.calls[-1] == (location, host, f"{host} is {risk}")
    assert len(check.calls) == 2


def test_a_host_is_asked_about_once_per_fetch_however_many_hops(server):
    check = Destinations()
    assert parse(fetch_checked(redirect_chain(server, 3), check)).content == "the end"
    assert len(check.calls) == 1


@pytest.mark.parametrize("location", ["file:///etc/passwd", "ftp://127.0.0.1/file.txt", "gopher://127.0.0.1:70/"])
def test_a_redirect_to_another_scheme_is_refused_with_the_reason(server, location):
    check = Destinations()
    result = fetch_checked(server.redirect("/away", location), check)
    assert result.is_error and not result.network_error
    assert f"redirected to '{location}'" in result.content
    assert "only http:// and https://" in result.content
    assert [url for url, _, _ in check.calls] == [server.url("/away")]


def test_a_redirect_body_is_never_read(server, monkeypatch):
    # The redirect promises a gigabyte, sends 64 KB and stalls: reading it would time out.
    monkeypatch.setattr(web_fetch_module, "READ_TIMEOUT", 2.0)
    server.add("/target", "arrived", content_type="text/plain")

    def huge_redirect(request: RequestHandler) -> None:
        request.send_response(302)
        request.send_header("Location", "/target")
        request.send_header("Content-Length", str(1024 * MB))
        request.end_headers()
        request.wfile.write(b"z" * 65536)
        request.wait_for_shutdown(30)

    # Reading the stalled body would end in a read timeout (a NetworkError), not in the target's page.
    assert parse(fetch(server.route("/moved", huge_redirect))).content == "arrived"


@pytest.fixture
def proxy_env(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_through_a_proxy_a_name_that_does_not_resolve_here_goes_unvetted_and_literal_hosts_are_vetted(
    server, names, proxy_env
):
    # The proxy (our server: it answers absolute-form requests by path) may resolve names this machine cannot.
    proxy_env.setenv("http_proxy", server.url(""))
    server.add("/page", "via proxy", content_type="text/plain")
    check = Destinations(refuse=("*",))
    assert parse(fetch_checked("http://public.example/page", check)).content == "via proxy"
    assert check.calls == [] and names.lookups == ["public.example"]
    for url, reason in [
        ("http://127.0.0.1:9/page", "127.0.0.1 is a loopback address"),
        ("http://localhost/page", "localhost is a loopback address"),
        ("http://metadata.google.internal/page", "metadata.google.internal is a cloud metadata address"),
    ]:
        assert fetch_checked(url, check).content == f"Not fetched: {reason}."
    assert server.hits["/page"] == 1


def test_no_proxy_hosts_are_fetched_directly_and_vetted_after_resolution(server, proxy_env):
    proxy_env.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens there
    proxy_env.setenv("no_proxy", "127.0.0.1")
    check = Destinations()
    assert parse(fetch_checked(server.add("/page", "direct", content_type="text/plain"), check)).content == "direct"
    assert check.calls == [(server.url("/page"), "127.0.0.1", "127.0.0.1 is a loopback address")]


# --- the tool as the model sees it ------------------------------------------------------------------------


def test_schema_and_guidance():
    schema = web_fetch.schema()
    assert schema["name"] == "web_fetch" and web_fetch.risk == "network"
    assert schema["input_schema"]["required"] == ["url"]
    assert schema["input_schema"]["properties"]["offset"] == {
        "default": 0,
        "description": schema["input_schema"]["properties"]["offset"]["description"],
        "minimum": 0,
        "type": "integer",
    }
    assert "offset" in web_fetch.guidance and "read_file" in web_fetch.guidance


@pytest.fixture
def proxy(proxy_env):
    """A loopback server set as the proxy for http:// URLs: it records what the proxy was asked to fetch."""
    with WebServer() as running:
        proxy_env.setenv("http_proxy", running.url(""))
        yield running


@pytest.mark.parametrize(
    ("address", "risk"),
    [("127.0.0.1", "a loopback"), ("169.254.169.254", "a cloud metadata"), ("10.1.2.3", "a private")],
)
def test_behind_a_proxy_a_name_is_resolved_and_vetted_before_the_proxy_is_handed_it(proxy, names, address, risk):
    names.table["public.example"] = [address]
    check = Destinations(refuse=("public.example",))
    url = "http://public.example/latest/meta-data/"
    result = fetch_checked(url, check)
    assert result.is_error and not result.network_error, result.content
    assert [(host, reason.split(",")[0]) for _, host, reason in check.calls] == [
        ("public.example", f"public.example resolves to {address}")
    ]
    assert risk in check.calls[0][2]
    assert sum(proxy.hits.values()) == 0


def test_behind_a_proxy_a_public_name_goes_to_the_proxy_unasked(proxy, names):
    names.table["public.example"] = ["93.184.215.14"]
    proxy.add("/page", "via the proxy", content_type="text/plain")
    check = Destinations(refuse=("*",))
    assert parse(fetch_checked("http://public.example/page", check)).content == "via the proxy"
    assert check.calls == [] and proxy.hits["/page"] == 1
