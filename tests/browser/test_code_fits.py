"""Code fits the page, in a real browser (issue 33, "Code fits").

- At 1280x900, on every lesson of every language and every program page
  (hooks/program_pages.py) of the languages of FONT_LANGUAGES, no code block scrolls sideways: each ``article pre > code`` is as wide as its
  content. The verified output under a launch command (``details.course-output``, closed
  until the reader opens it) is what torchrun printed, not code the course writes: left out.
- At 390 px (a phone), inline code in a table cell breaks only right after a ``.`` or ``_``
  (hooks/table_code_breaks.py and course.css), never mid-word.

Sections and code blocks are laid out only near the viewport (``content-visibility: auto``,
docs/assets/course.css): the measurements first make every one of them visible, so what is
measured is the real layout, as a reader scrolling there would get it. (Chromium 156 also
lays out a skipped block when its scrollWidth is read: without the override the desktop test
found the same 20 blocks in English; the override keeps the test independent of that.)
"""
from __future__ import annotations

import pytest

from conftest import LANGUAGES
from test_program_download import LESSONS
from test_reader_site import PROJECT, _open, _url, browser, hosted, page, server  # noqa: F401  fixtures

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1280, "height": 900}
# Program pages show the same code in every language (tests/site/test_built_site.py), and a
# block's width depends only on the monospace font the page's language selects: one for the
# Latin and Cyrillic languages, a narrower one for Japanese (measured: 110 against 133
# characters in the 938 px column). Their program pages are measured in the default language
# and in Japanese; each language's lessons, with their translated prose, all of them.
FONT_LANGUAGES = (PROJECT.default_language, "ja")
PHONE = {"width": 390, "height": 900}
# Every section and code block laid out now (their widths are what a reader scrolling there
# gets), every <details> but the verified output open.
_RENDER_ALL = """() => {
  const style = document.createElement("style");
  style.textContent = ".md-typeset .course-section, .md-typeset div.highlight"
    + " { content-visibility: visible !important; }";
  document.head.append(style);
  for (const d of document.querySelectorAll("article details:not(.course-output)")) d.open = true;
}"""
# Each code block wider than its box: its number on the page, title and longest line.
_OVERFLOWING = """() => [...document.querySelectorAll("article pre > code")].flatMap((code, n) => {
  if (code.closest("details.course-output") || code.scrollWidth <= code.clientWidth) return [];
  const title = code.closest(".highlight")?.querySelector(".filename")?.textContent.trim() ?? "";
  const longest = code.textContent.split("\\n").reduce((a, b) => (b.length > a.length ? b : a), "");
  return [{block: n + 1, title, over: code.scrollWidth - code.clientWidth, longest}];
})"""
# Each line box of each table cell's inline code: where the line breaks and what is before
# and after it. A line's characters share a top in their Range rects (per character, the
# CSSOM View's getClientRects of a one-character Range).
_CELL_CODE_BREAKS = """() => [...document.querySelectorAll("article td code, article th code")].flatMap(code => {
  const chars = [];
  const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = [...range.getClientRects()].find(r => r.width > 0);
      chars.push({c: node.data[i], top: rect ? Math.round(rect.top) : null});
    }
  }
  const breaks = [];
  let last = null;
  chars.forEach((ch, i) => {
    if (ch.top === null) return;
    if (last !== null && ch.top > chars[last].top + 2) breaks.push({before: chars[last].c,
      text: code.textContent, at: chars.slice(0, i).map(x => x.c).join("")});
    last = i;
  });
  return breaks;
})"""


def _program_pages(site, language: str) -> list[str]:
    """The program pages of ``language``'s build, as page paths (``programs/ddp_basics/train``)."""
    base = site if language == PROJECT.default_language else site / language
    return sorted(p.parent.relative_to(base).as_posix() for p in base.glob("programs/*/*/index.html"))


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_code_block_scrolls_sideways_at_1280_px(hosted, page, language):
    server, site = hosted
    programs = _program_pages(site, language)
    assert programs, f"{language}: no program pages in {site}"
    pages = [*LESSONS, *(programs if language in FONT_LANGUAGES else [])]
    page.set_viewport_size(DESKTOP)
    overflowing = []
    for name in pages:
        # Widths need the page's styles, not its scripts: "load", not _open's wait for Material.
        response = page.goto(_url(server, language, name), wait_until="load")
        assert response is not None and response.ok, f"{language}/{name}/: {response and response.status}"
        page.evaluate(_RENDER_ALL)
        for block in page.evaluate(_OVERFLOWING):
            overflowing.append(f"{language}/{name}/ block {block['block']} {block['title']}: "
                               f"{block['over']} px too wide, longest line ({len(block['longest'])} "
                               f"characters): {block['longest']!r}")
    assert not overflowing, (f"{len(overflowing)} code blocks of {language} scroll sideways at 1280 px; "
                             "keep program lines short (snippets/):\n" + "\n".join(overflowing))


@pytest.mark.parametrize("language", LANGUAGES)
def test_inline_code_in_a_table_wraps_only_after_a_dot_or_underscore_on_a_phone(server, page, language):
    page.set_viewport_size(PHONE)
    wrapped, wrong = 0, []
    for lesson in LESSONS:
        _open(page, _url(server, language, lesson))
        page.evaluate(_RENDER_ALL)
        for line_break in page.evaluate(_CELL_CODE_BREAKS):
            wrapped += 1
            if line_break["before"] not in "._ ":
                wrong.append(f"{language}/{lesson}/: {line_break['text']!r} breaks after {line_break['at']!r}")
    assert not wrong, "inline code in a table cell broken mid-word at 390 px:\n" + "\n".join(wrong)
    assert wrapped, (f"{language}: no inline code in a table cell wraps at 390 px (WORLD_SIZE in a narrow column "
                     "should break after its _): no <wbr> from hooks/table_code_breaks.py?")
