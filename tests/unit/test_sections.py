"""coursekit.sections: what follows each top-level h2, up to the next, becomes one
div.course-section after it, and nothing else about the page changes."""
from __future__ import annotations

import markdown
import pytest
from bs4 import BeautifulSoup

from conftest import ROOT
from po_i18n.markdown_engine import engine_for

ENGINE = engine_for(ROOT / "mkdocs.yml")
# the site's extensions, and footnotes, which the site does not use but a page may
SITE_EXTENSIONS = [*ENGINE.extensions, "footnotes"]
WITHOUT = [name for name in SITE_EXTENSIONS if name != "coursekit.sections"]

PAGE = """# Title

Before any section[^1].

## First { #first }

Text of the first section.

/// admonition | A heading inside a block
## Not a section of its own
///

- a list
- that ends the section

## Empty, straight before the next heading

## Second

| a | b |
|---|---|
| 1 | 2 |

[^1]: A footnote, placed at the end of the page.
"""


def _blocks(soup: BeautifulSoup) -> list[str]:
    """The page's elements in document order, each as its serialized HTML (whitespace
    between blocks, which the wrapping moves, left out)."""
    return [str(el) for el in soup.find_all(True)]


def _render(text: str, extensions: list, min_sections: int | None = 1) -> str:
    """``text`` rendered with ``extensions`` and the site's options for them; sections
    wrapped from ``min_sections`` top-level headings on (None: the site's own threshold)."""
    configs = {name: dict(options) for name, options in ENGINE.configs.items() if name in extensions}
    if min_sections is not None and "coursekit.sections" in extensions:
        configs["coursekit.sections"] = {**configs.get("coursekit.sections", {}), "min_sections": min_sections}
    return markdown.Markdown(extensions=extensions, extension_configs=configs).convert(text)


def test_the_site_enables_sections():
    assert ENGINE.has("coursekit.sections")


def test_each_top_level_heading_is_followed_by_its_body_and_nothing_else_changes():
    with_sections = _render(PAGE, SITE_EXTENSIONS)
    without = _render(PAGE, WITHOUT)
    soup = BeautifulSoup(with_sections, "html.parser")
    # nothing lost, added or moved: with the bodies unwrapped, the page is the same
    unwrapped = BeautifulSoup(with_sections, "html.parser")
    for body in unwrapped.select("div.course-section"):
        body.unwrap()
    assert _blocks(unwrapped) == _blocks(BeautifulSoup(without, "html.parser"))
    top = soup.find_all(True, recursive=False)
    # the headings stay at the top level, each followed by its body; what comes before
    # the first h2 stays where it was
    assert [el.name + ("." + " ".join(el.get("class", [])) if el.get("class") else "") for el in top] == [
        "h1", "p", "h2", "div.course-section", "h2", "h2", "div.course-section"]
    first, second = soup.select("div.course-section")
    assert first.find_previous_sibling("h2")["id"] == "first"
    assert second.find_previous_sibling("h2")["id"] == "second"
    # the h2 inside the admonition stays inside the first body; the footnotes end the last
    assert first.select_one("div.admonition h2") is not None
    assert second.find("div", class_="footnote", recursive=False) is not None


@pytest.mark.parametrize("text", ["# Only a title\n\nAnd a paragraph.\n", "Text.\n\n### A third-level heading\n"])
def test_a_page_without_a_top_level_h2_is_unchanged(text):
    assert _render(text, SITE_EXTENSIONS) == _render(text, WITHOUT)


def test_a_short_page_is_left_unchanged_and_a_lesson_is_wrapped():
    # a page of few sections costs little to lay out, and a skipped body on its first
    # screen only moves what follows when it is painted (issue 33); lessons have 13-19
    home = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    lesson = (ROOT / "docs" / "ddp-basics.md").read_text(encoding="utf-8")
    sections = sum(line.startswith("## ") for line in home.splitlines())
    assert 0 < sections < 8
    assert _render(home, SITE_EXTENSIONS, None) == _render(home, WITHOUT)
    assert "course-section" in _render(home, SITE_EXTENSIONS, sections)
    assert "course-section" not in _render(home, SITE_EXTENSIONS, sections + 1)
    assert _render(lesson, SITE_EXTENSIONS, None).count('<div class="course-section">') >= 13


@pytest.mark.parametrize("value", [0, -1, "8", True, 2.5])
def test_a_bad_min_sections_is_refused_with_its_name_and_remedy(value):
    with pytest.raises(ValueError, match=r"coursekit.sections: min_sections is .*; set it to a whole number"):
        markdown.Markdown(extensions=["coursekit.sections"],
                          extension_configs={"coursekit.sections": {"min_sections": value}})
