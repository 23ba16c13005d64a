"""Inline code in table cells of the built site has a ``<wbr>`` after each ``.`` and ``_``
between two letters or digits (hooks/table_code_breaks.py), and nothing else changed: the
code's text is the Markdown's, search indexes whole identifiers, code blocks have none.
How it wraps in a browser: tests/browser/test_code_fits.py."""
from __future__ import annotations

import json
import re

import pytest
from bs4 import BeautifulSoup, NavigableString, Tag

from conftest import LANGUAGES
from test_built_site import LESSONS, PROJECT, default_build, page_path, site  # noqa: F401  fixtures

pytestmark = pytest.mark.site

_BACKTICKS = re.compile(r"(`+)(.+?)\1")


def _expected_breaks(text: str) -> list[int]:
    """Offsets in ``text`` right after a run of ``.``/``_`` that has a letter or digit on
    each side: written out here, independently of the hook's regular expression."""
    breaks = []
    for i in range(1, len(text)):
        if text[i - 1] in "._" and text[i] not in "._" and (text[i].isalnum()):
            start = i - 1
            while start > 0 and text[start - 1] in "._":
                start -= 1
            if start > 0 and text[start - 1].isalnum():
                breaks.append(i)
    return breaks


def _text_and_breaks(code: Tag) -> tuple[str, list[int]]:
    """The code's text, and the offsets in it where a ``<wbr>`` stands."""
    text, breaks = "", []
    for node in code.descendants:
        if isinstance(node, NavigableString):
            text += str(node)
        elif node.name == "wbr":
            breaks.append(len(text))
    return text, breaks


def _cell_codes(soup: BeautifulSoup) -> list[Tag]:
    return [code for code in soup.select("article td code, article th code") if code.find_parent("pre") is None]


@pytest.fixture(scope="module")
def cell_codes(site) -> dict[tuple[str, str], list[Tag]]:
    """``(language, lesson)`` -> the inline code of the lesson's table cells."""
    return {(language, lesson): _cell_codes(BeautifulSoup(page_path(site, language, lesson).read_text(encoding="utf-8"),
                                                           "html.parser"))
            for language in LANGUAGES for lesson in LESSONS}


def test_lessons_have_identifiers_in_tables(cell_codes):
    texts = {_text_and_breaks(code)[0] for codes in cell_codes.values() for code in codes}
    assert {"fully_shard", "reshard_after_forward=False", "LOCAL_WORLD_SIZE"} <= texts, sorted(texts)


def test_each_dot_and_underscore_of_code_in_a_table_cell_is_followed_by_a_break(cell_codes):
    wrong = []
    for (language, lesson), codes in cell_codes.items():
        for code in codes:
            text, breaks = _text_and_breaks(code)
            if breaks != _expected_breaks(text):
                wrong.append(f"{language}/{lesson}: {code} has <wbr> at {breaks}, expected {_expected_breaks(text)}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_text_of_code_in_a_table_cell_is_the_markdowns(cell_codes, lesson):
    """<wbr> adds no character: each cell's code reads exactly as a backtick span of the page."""
    source = (PROJECT.docs_dir / f"{lesson}.md").read_text(encoding="utf-8")
    spans = {m.group(2).strip() for m in _BACKTICKS.finditer(source)}
    for code in cell_codes[(PROJECT.default_language, lesson)]:
        assert code.get_text() in spans, f"{lesson}: {code} reads {code.get_text()!r}, no `…` span of the page"


def test_no_break_elsewhere_and_search_indexes_whole_identifiers(site):
    for path in sorted(site.rglob("*.html")):
        soup = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for wbr in soup.find_all("wbr"):
            assert wbr.find_parent("code") is not None and wbr.find_parent(["td", "th"]) is not None, (path, wbr.parent)
            assert wbr.find_parent("pre") is None, (path, wbr.parent)
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    texts = " ".join(doc["text"] for doc in index["docs"])
    assert "reshard_after_forward=False" in texts and "wbr" not in texts
