"""HTML to Markdown for web_fetch: drop scripts and page chrome, keep the document's structure.

The model wants the page's content, not its menus: scripts, styles and embedded objects go, and so do
navigation landmarks and elements whose class or id names them as menus, sidebars or cookie banners. Removal
is conservative: `<main>`, `<article>` and anything containing them always stay, and a class-matched element
that holds a large share of the page's text is kept (a wrapper like `class="has-sidebar"` is not chrome).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

NEVER_CONTENT = (
    "head", "title", "script", "style", "noscript", "iframe", "svg", "template", "canvas",
    "object", "embed", "button", "select", "input", "link", "meta",
)  # fmt: skip
ALWAYS_CHROME_TAGS = ("nav",)
# header/footer/aside are page landmarks only outside sectioning content (the HTML spec's own rule), so a
# post's header with its title and byline stays.
LANDMARK_TAGS = ("header", "footer", "aside")
SECTIONING = ("article", "main", "section")
CHROME_ROLES = {"navigation", "banner", "contentinfo", "menu", "menubar", "search"}
# Matched against the hyphen/underscore-separated parts of each class and the id: "site-nav" and
# "cookie_banner" and "TopNavigation" match; "navigator" or "menus-of-the-day" do not.
CHROME_WORDS = {
    "nav", "navbar", "navigation", "navbox", "navmenu", "menu", "menubar", "sidebar", "breadcrumb",
    "breadcrumbs", "cookie", "cookies", "consent", "gdpr", "skip", "skiplink", "editsection",
}  # fmt: skip
LANDMARK_WORDS = {"footer"}
MAX_CHROME_SHARE = 0.4
"""A class-matched element holding more than this share of the page's text is treated as content."""
MAIN_SHARE = 0.4
"""Convert only the page's <main> when it holds at least this share of the text (else it is mislabelled)."""
PERMALINK_TEXTS = {"", "¶", "#", "§", "🔗", "link"}
LANGUAGE_CLASS = re.compile(r"^(?:language|lang|highlight|brush)[-:]([\w+#.-]+)$", re.IGNORECASE)
NOT_A_LANGUAGE = {"default", "none", "nohighlight", "notranslate"}
WORD_SPLIT = re.compile(r"[-_\s]+")
CAMEL_HUMP = re.compile(r"([a-z0-9])([A-Z])")
FENCE = re.compile(r"^(```+)")
STRAY_INDENT = re.compile(r"^ \S")


def html_to_markdown(html: str, base_url: str = "") -> str:
    """The page as Markdown: its <title> as the first heading, then the content without chrome."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    title = " ".join(soup.title.get_text().split()) if soup.title else ""
    _drop_non_content(soup)
    root = _content_root(soup)
    _drop_chrome(root)
    _prepare_tables(root)
    _tidy_links_and_images(root, base_url)
    markdown = _tidy_text(_converter().convert_soup(root))
    if title and not markdown.startswith(f"# {title}\n"):
        markdown = f"# {title}\n\n{markdown}".rstrip() + "\n"
    return markdown


def _drop_non_content(soup: BeautifulSoup) -> None:
    from bs4 import Comment, Declaration, Doctype, ProcessingInstruction

    for element in soup.find_all(NEVER_CONTENT):
        element.decompose()
    for node in soup.find_all(string=lambda s: isinstance(s, (Comment, Declaration, Doctype, ProcessingInstruction))):
        node.extract()


def _content_root(soup: BeautifulSoup) -> Tag:
    """The innermost <main> (or role=main) when the page has one chain of them holding most of the text."""
    candidates = soup.find_all(lambda el: el.name == "main" or el.get("role") == "main")
    if not candidates:
        return soup
    innermost = candidates[-1]
    if any(candidate not in innermost.parents for candidate in candidates[:-1]):
        return soup  # several separate "main" regions: no single content root
    page_text = len(soup.get_text(strip=True))
    if page_text and len(innermost.get_text(strip=True)) / page_text >= MAIN_SHARE:
        return innermost
    return soup


def _drop_chrome(root: Tag) -> None:
    total_text = len(root.get_text(strip=True)) or 1
    for element in root.find_all(True):
        if element.decomposed:
            continue  # inside chrome already dropped
        landmark = _is_landmark_chrome(element)
        if not landmark and not _has_chrome_name(element):
            continue
        if _holds_main_content(element):
            continue
        if landmark or len(element.get_text(strip=True)) / total_text <= MAX_CHROME_SHARE:
            element.decompose()


def _holds_main_content(element: Tag) -> bool:
    if element.name in ("html", "body", "main", "article") or element.get("role") == "main":
        return True
    return element.find(lambda el: el.name in ("main", "article") or el.get("role") == "main") is not None


def _is_landmark_chrome(element: Tag) -> bool:
    if element.name in ALWAYS_CHROME_TAGS or element.get("role") in CHROME_ROLES:
        return True
    return element.name in LANDMARK_TAGS and element.find_parent(SECTIONING) is None


def _has_chrome_name(element: Tag) -> bool:
    names = [*(element.get("class") or []), element.get("id") or ""]
    words = {word for name in names for word in WORD_SPLIT.split(CAMEL_HUMP.sub(r"\1-\2", name).lower()) if word}
    if words & CHROME_WORDS:
        return True
    return bool(words & LANDMARK_WORDS) and element.find_parent(SECTIONING) is None


def _prepare_tables(root: Tag) -> None:
    """Layout tables become plain blocks (a Markdown table would flatten them onto one line); data tables
    lose what would stop markdownify from seeing their first row as the header (caption, colgroup)."""
    for table in root.find_all("table"):  # outer tables first, so each is judged after its parent's unwrap
        if _is_layout_table(table):
            for part in _own_parts(table, ("tr", "thead", "tbody", "tfoot", "colgroup")):
                part.unwrap()
            for part in _own_parts(table, ("td", "th", "caption")):
                part.name = "div"
            table.name = "div"
            continue
        for part in _own_parts(table, ("colgroup", "col")):
            part.decompose()
        for caption in _own_parts(table, ("caption",)):
            caption.name = "p"
            table.insert_before(caption.extract())
        for image in table.find_all("img", alt=lambda alt: not alt):
            # a status icon in a cell carries data: name it after its file ("finished.png" -> finished)
            image["alt"] = PurePosixPath(urlsplit(image.get("src") or "").path).stem


def _is_layout_table(table: Tag) -> bool:
    if table.get("role") in ("presentation", "none") or table.find("table") is not None:
        return True
    return len(_own_parts(table, ("td", "th"))) <= 1


def _own_parts(table: Tag, names: tuple[str, ...]) -> list[Tag]:
    return [part for part in table.find_all(names) if part.find_parent("table") is table]


def _tidy_links_and_images(root: Tag, base_url: str) -> None:
    """Absolute URLs the model can fetch next; no permalink pilcrows, script links or inline data blobs."""
    for link in root.find_all("a"):
        href = (link.get("href") or "").strip()
        if href.startswith("#") and link.get_text(strip=True) in PERMALINK_TEXTS:
            link.decompose()
        elif href.lower().startswith(("javascript:", "data:")):
            del link["href"]
        elif href and not href.startswith("#") and base_url:
            link["href"] = urljoin(base_url, href)
    for image in root.find_all("img"):
        src = (image.get("src") or "").strip()
        if not src or not image.get("alt") or src.lower().startswith("data:"):
            image.replace_with(image.get("alt") or "")  # decorative or inline blob: at most its alt text
        elif base_url:
            image["src"] = urljoin(base_url, src)


def _tidy_text(markdown: str) -> str:
    """Outside code blocks: no runs of blank lines, no stray one-space indents left by inline whitespace."""
    lines: list[str] = []
    fence = ""
    for line in markdown.splitlines():
        line = line.rstrip()
        opening = FENCE.match(line)
        if opening and (not fence or opening.group(1).startswith(fence)):
            fence = "" if fence else opening.group(1)
        elif not fence:
            if not line and (not lines or not lines[-1]):
                continue
            if STRAY_INDENT.match(line):
                line = line[1:]
        lines.append(line)
    return "\n".join(lines).strip() + "\n"


def code_language(pre: Tag) -> str:
    """The language a code block declares: language-x / lang-x / highlight-x classes, or data-lang."""
    code = pre.find("code")
    for element in (pre, code, pre.parent, pre.parent.parent if pre.parent else None):
        if element is None:
            continue
        declared = element.get("data-lang")
        if declared and declared.lower() not in NOT_A_LANGUAGE:
            return declared
        for name in element.get("class") or []:
            match = LANGUAGE_CLASS.match(name)
            if match and match.group(1).lower() not in NOT_A_LANGUAGE:
                return match.group(1)
    return ""


@lru_cache(maxsize=1)
def _converter() -> object:
    from markdownify import MarkdownConverter

    class Converter(MarkdownConverter):
        """markdownify with fences that survive backticks in the code, and the declared language kept."""

        def convert_pre(self, el, text, parent_tags):  # noqa: ANN001 - markdownify's signature
            code = text.strip("\n")
            if not code.strip():
                return ""
            longest_run = max((len(run) for run in re.findall(r"`+", code)), default=0)
            fence = "`" * max(3, longest_run + 1)
            return f"\n\n{fence}{code_language(el)}\n{code}\n{fence}\n\n"

    # No escaping of * and _: the reader is a model, and `snake_case` names should stay legible.
    return Converter(
        heading_style="ATX", bullets="-", table_infer_header=True, escape_asterisks=False, escape_underscores=False
    )
