"""The example site (``example/``) translated through the plugin, as any site adopts it.

Its own nav, old- and blocks-style containers, content tabs, an annotation, footnotes,
definition lists, abbreviations and a grid of cards, with ``plugins: - po-i18n`` and
pseudo-translated ``fr`` catalogs. Built strict in both locales, each page's element tree
must be the English one apart from text, and headings without an explicit id keep the
English id.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from example_site import EXAMPLE, MKDOCS, MKDOCS_ENV, load_module
from po_i18n.fuzz import structure

pytestmark = pytest.mark.site

SITE = EXAMPLE
pseudo = load_module(SITE / "pseudolocalize.py").pseudo_locale  # what the fr catalogs hold
PAGES = ("", "guide/install/", "guide/concepts/")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fixture-site") / "site"
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-d", str(out)], cwd=SITE, capture_output=True, text=True,
                          env=MKDOCS_ENV)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr
    return out


def article(site: Path, language: str, page: str) -> BeautifulSoup:
    base = site if language == "en" else site / language
    return BeautifulSoup((base / page / "index.html").read_text(encoding="utf-8"), "html.parser").select_one("article")


@pytest.mark.parametrize("page", PAGES)
def test_both_locales_have_the_same_element_tree_apart_from_text(built, page):
    english, translated = article(built, "en", page), article(built, "fr", page)
    assert structure(str(translated)) == structure(str(english))
    assert translated.get_text() != english.get_text()
    assert translated.h1.get_text().rstrip("¶") == globals()["pseudo"](english.h1.get_text().rstrip("¶"))


@pytest.mark.parametrize("page", PAGES)
def test_headings_without_an_id_keep_the_english_anchor(built, page):
    ids = [[h["id"] for h in article(built, lang, page).find_all(re.compile("^h[1-6]$"))] for lang in ("en", "fr")]
    assert ids[0] == ids[1]  # the fr text slugs differently (Cyrillic letters): only the written ids agree
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", i) for i in ids[1])  # readable English slugs, no _1


def test_the_constructs_are_there_in_the_pseudo_locale(built):
    install, index, concepts = (article(built, "fr", p) for p in ("guide/install/", "", "guide/concepts/"))
    assert [label.get_text() for label in install.select(".tabbed-labels label")] == [pseudo("pip"), pseudo("From source")]
    assert install.select_one("details.question summary").get_text() == pseudo("What if a test fails?")
    assert install.select_one("div.admonition.warning p.admonition-title").get_text() == pseudo("Supported platforms")
    assert install.select_one("p.annotate") is not None
    assert [a["title"] for a in index.select("abbr")] == [pseudo("Hypertext Markup Language"), pseudo("Cascading Style Sheets")]
    assert len(index.select("div.grid.cards li")) == 2
    assert [dt.get_text() for dt in concepts.select("dl dt")] == [pseudo("Frame"), pseudo("Knob")]
    assert len(index.select("div.footnote li p")) == 2  # the footnote's second paragraph is translated too


def test_syntax_the_site_does_not_enable_is_a_build_warning_and_a_check_line(tmp_path, capsys):
    """``??? question`` with pymdownx.details taken out of mkdocs.yml renders as text: the
    strict build fails on a warning naming page and line, and ``po-i18n check`` says it."""
    import shutil

    from po_i18n import cli

    site = tmp_path / "example"
    shutil.copytree(SITE, site, ignore=shutil.ignore_patterns("__pycache__"))
    config = site / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace("  - pymdownx.details\n", ""), encoding="utf-8")
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-d", str(tmp_path / "out")], cwd=site, capture_output=True,
                          text=True, env=MKDOCS_ENV)
    line = next(n for n, text in enumerate((site / "docs/guide/install.md").read_text().splitlines(), 1)
                if text.startswith("???"))
    expected = (f"docs/guide/install.md:{line}: '???' is pymdownx.details syntax, which mkdocs.yml does not "
                "enable: it renders as text; add pymdownx.details to markdown_extensions or use pymdownx.blocks")
    assert proc.returncode != 0
    assert re.search(r"^WARNING +- +" + re.escape(expected) + "$", proc.stderr, re.M), proc.stderr
    assert cli.main(["--config", str(config), "check"]) == 1
    assert expected in capsys.readouterr().out.splitlines()


def test_navigation_titles_from_mkdocs_yml_are_translated(built):
    """``- Home: index.md`` and the section ``- Guide:`` are messages of ``_site.po`` and
    show translated in the French navigation, nowhere in English."""
    page = BeautifulSoup((built / "fr" / "index.html").read_text(encoding="utf-8"), "html.parser")
    labels = {link.get_text(strip=True) for link in page.select("nav.md-nav--primary .md-nav__link")}
    assert {pseudo("Home"), pseudo("Guide")} <= labels, labels
    assert not {"Home", "Guide"} & labels, labels
