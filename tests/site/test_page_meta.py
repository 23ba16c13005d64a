"""Each page's description and link preview: its own, from its first paragraph in its own
language (or its front matter), repeated in Open Graph and Twitter card tags."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import LANGUAGES, ROOT, copy_project
from site_server import MKDOCS, MKDOCS_ENV, shared_build
from po_i18n.project import Project

pytestmark = pytest.mark.site

PROJECT = Project.load(ROOT / "mkdocs.yml")
STATUS_PAGE = PROJECT.options["status_page"].removesuffix(".md")
LESSONS = [p.with_suffix("").as_posix() for p in PROJECT.pages() if p.stem != "index"]
PAGES = ["index", *LESSONS, STATUS_PAGE]
HOST = "https://example.org/torch-distributed-course/"  # as test_built_site builds it
ASIDES = ("aside", "blockquote", "details", "figure", "nav", "ol", "table", "ul")
OG_LOCALES = {"en": "en_US", "ru": "ru_RU", "ja": "ja_JP", "tr": "tr_TR", "sv": "sv_SE"}


def _build(out: Path, cwd: Path = ROOT, **env: str) -> Path:
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-q", "--site-dir", str(out)], cwd=cwd,
                          capture_output=True, text=True, env={**MKDOCS_ENV, **env})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return shared_build(tmp_path_factory)[0]


@pytest.fixture(scope="module")
def hosted_site(tmp_path_factory) -> Path:
    return shared_build(tmp_path_factory, SITE_URL=HOST)[0]


def _soup(site: Path, language: str, page: str) -> BeautifulSoup:
    base = site if language == PROJECT.default_language else site / language
    path = base / "index.html" if page == "index" else base / page / "index.html"
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _meta(soup: BeautifulSoup, key: str) -> str | None:
    found = soup.find_all("meta", attrs={"property" if key.startswith("og:") else "name": key})
    assert len(found) <= 1, (key, found)
    return found[0]["content"] if found else None


def _first_paragraph(soup: BeautifulSoup) -> str:
    """The page's first paragraph of prose after its h1, as the built HTML shows it."""
    for paragraph in soup.select_one("article h1").find_all_next("p"):
        if not paragraph.find_parent(ASIDES) and not paragraph.find_parent("div", class_="admonition"):
            return " ".join(paragraph.get_text().split())
    raise AssertionError("no paragraph after the h1")


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_description_is_the_start_of_the_pages_own_first_paragraph(site, language, page):
    soup = _soup(site, language, page)
    description, paragraph = _meta(soup, "description"), _first_paragraph(soup)
    assert description and len(description) <= 160, description
    assert paragraph.startswith(description.removesuffix("…")), (description, paragraph)
    if description != paragraph:  # cut: after a sentence, or at a word with an ellipsis
        assert description.endswith(("…", ".", "。", "!", "?")), description
        assert len(description) >= 160 // 3, description
    assert description != PROJECT.config["site_description"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_lesson_descriptions_are_distinct(site, language):
    descriptions = [_meta(_soup(site, language, page), "description") for page in PAGES]
    assert len(set(descriptions)) == len(PAGES), descriptions


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_link_preview_repeats_the_pages_title_and_description(site, language, page):
    soup = _soup(site, language, page)
    description = _meta(soup, "description")
    title = soup.select_one("article h1").get_text().rstrip("¶").strip()
    assert _meta(soup, "og:description") == _meta(soup, "twitter:description") == description
    assert _meta(soup, "og:title") == _meta(soup, "twitter:title") == title
    assert _meta(soup, "og:type") == ("website" if page == "index" else "article")
    assert _meta(soup, "twitter:card") == "summary"
    assert re.fullmatch(rf"{language}_[A-Z]{{2}}", _meta(soup, "og:locale"))
    assert _meta(soup, "og:locale") == OG_LOCALES.get(language, _meta(soup, "og:locale"))
    site_name = _meta(soup, "og:site_name")
    assert site_name and soup.select_one(".md-header__topic .md-ellipsis").get_text().strip() == site_name
    assert _meta(soup, "og:url") is None  # no absolute address without SITE_URL
    assert not soup.find("meta", attrs={"property": "og:image"})


@pytest.mark.parametrize("language", LANGUAGES)
def test_og_url_is_the_canonical_address_with_site_url(hosted_site, language):
    for page in PAGES:
        soup = _soup(hosted_site, language, page)
        canonical = soup.find("link", rel="canonical")["href"]
        assert canonical.startswith(HOST) and _meta(soup, "og:url") == canonical, page


def test_front_matter_description_wins_on_english_pages_and_is_escaped(tmp_path):
    (tmp_path / "project").mkdir()
    project = copy_project(tmp_path / "project")
    text = 'Checked "twice" & <never> guessed.'
    page = project / "docs" / "verification.md"
    page.write_text(f"---\ndescription: '{text}'\n---\n\n" + page.read_text(encoding="utf-8"), encoding="utf-8")
    site = _build(tmp_path / "site", cwd=project)
    soup = _soup(site, "en", "verification")
    assert _meta(soup, "description") == _meta(soup, "og:description") == _meta(soup, "twitter:description") == text
    translated = _soup(site, "ja", "verification")  # front matter is English: its own paragraph instead
    assert _meta(translated, "description") == _first_paragraph(translated)
    html = (site / "verification" / "index.html").read_text(encoding="utf-8")
    assert '"twice"' not in html and "<never>" not in html  # escaped once in each of the three tags
    assert html.count("Checked &#34;twice&#34; &amp; &lt;never&gt; guessed.") == 3
