"""The footer and header furniture of every built page (issue 33): the licences of code and
text and the link to the translation status page in the page's language, the colour scheme
toggle's names translated; the status page out of the navigation, its language selector
leading to the status page of each language.

Expected texts come from the catalogs (``_course.po``, ``_site.po``), not from this file.
"""
from __future__ import annotations

import functools
from pathlib import Path
from urllib.parse import urljoin, urlparse

import polib
import pytest
from bs4 import BeautifulSoup, SoupStrainer

from conftest import LANGUAGES, ROOT
from site_server import shared_build
from coursekit.course_strings import LICENCE, TO_DARK, TO_LIGHT
from po_i18n.interface import STATUS_TITLE
from po_i18n.project import Project

pytestmark = pytest.mark.site

PROJECT = Project.load(ROOT / "mkdocs.yml")
STATUS = "translation-status"
LICENCE_LINKS = {"MIT": "https://spdx.org/licenses/MIT.html",  # SPDX's page of the licence
                 "CC BY 4.0": "https://creativecommons.org/licenses/by/4.0/"}  # Creative Commons' deed


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """``mkdocs build --strict`` of the working tree, once a session (shared)."""
    return shared_build(tmp_path_factory)[0]


def _translated(language: str, domain: str, msgid: str) -> str:
    """The catalog's translation of ``msgid`` (the msgid itself in the default language)."""
    if language == PROJECT.default_language:
        return msgid
    entry = polib.pofile(str(ROOT / "i18n" / language / f"{domain}.po")).find(msgid)
    assert entry is not None and entry.msgstr, f"i18n/{language}/{domain}.po: no translation of {msgid!r}"
    return entry.msgstr


def _language_of(site: Path, page: Path) -> str:
    first = page.relative_to(site).parts[0]
    return first if first in LANGUAGES[1:] else PROJECT.default_language


def _pages(site: Path) -> list[Path]:
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= len(LANGUAGES) * 2
    return pages


@functools.lru_cache(maxsize=None)
def _soup(page: Path) -> BeautifulSoup:
    """A page's header, navigation and footer (what these tests read; not its article),
    parsed once for every test of the module."""
    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser", parse_only=SoupStrainer(["header", "nav", "footer"]))


def _status_page(site: Path, language: str) -> Path:
    base = site if language == PROJECT.default_language else site / language
    return base / STATUS / "index.html"


def _resolve(page: Path, href: str) -> Path:
    path = Path(urlparse(urljoin(page.as_uri(), href)).path)
    return path / "index.html" if href.endswith("/") else path


def test_every_page_states_the_licences_in_its_language(site):
    for page in _pages(site):
        language = _language_of(site, page)
        line = _soup(page).select_one("footer .md-copyright .course-licence")
        assert line is not None, f"{page.relative_to(site)}: no licence line in the footer"
        expected = _translated(language, "_course", LICENCE.msgid) % {"code": "MIT", "text": "CC BY 4.0"}
        assert line.get_text() == expected, page.relative_to(site)
        assert {a.get_text(): a["href"] for a in line.select("a")} == LICENCE_LINKS, page.relative_to(site)


def test_every_page_links_the_status_page_of_its_language_in_the_footer(site):
    for page in _pages(site):
        language = _language_of(site, page)
        link = _soup(page).select_one("footer .md-copyright .course-status-link a")
        assert link is not None, f"{page.relative_to(site)}: no link to the translation status page in the footer"
        assert link.get_text() == _translated(language, "_site", STATUS_TITLE.msgid), page.relative_to(site)
        assert _resolve(page, link["href"]) == _status_page(site, language), (page.relative_to(site), link["href"])


def test_the_colour_scheme_toggle_is_named_in_the_pages_language(site):
    for page in _pages(site):
        language = _language_of(site, page)
        names = [label["title"] for label in _soup(page).select("form[data-md-component=palette] label[title]")]
        assert names == [_translated(language, "_course", s.msgid) for s in (TO_DARK, TO_LIGHT)], page.relative_to(site)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_status_page_is_built_but_not_in_the_navigation(site, language):
    status = _status_page(site, language)
    assert status.is_file()
    for page in _pages(site):
        if _language_of(site, page) == language:
            nav = _soup(page).select("nav.md-nav--primary a[href]")
            assert nav, page.relative_to(site)
            assert all(_resolve(page, a["href"]) != status for a in nav), page.relative_to(site)


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_status_pages_language_selector_leads_to_each_languages_status_page(site, language):
    page = _status_page(site, language)
    links = {a["hreflang"]: a["href"] for a in _soup(page).select("a.md-select__link[hreflang]")}
    assert set(links) == set(LANGUAGES), links
    for target, href in links.items():
        assert _resolve(page, href) == _status_page(site, target), (language, target, href)
