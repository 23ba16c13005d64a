"""Per-language search (option ``search_per_language``) on the example site, Material with
en and fr: each language searches its own pages with its own pipeline, in the plugin's
worker; switched off, or without the search plugin, mkdocs-static-i18n's merged index and
Material's worker stay as they are."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from example_site import EXAMPLE, MKDOCS, MKDOCS_ENV

pytestmark = pytest.mark.site

WORKER = Path("assets/javascripts/workers/po-i18n-search.js")
_CONFIG = re.compile(r'<script id="__config" type="application/json">(.*?)</script>', re.S)


def _build(out: Path, change: tuple[str, str] | None = None) -> Path:
    """The example site built strict into ``out``/site, mkdocs.yml changed by ``(old, new)``."""
    site = EXAMPLE
    if change is not None:
        site = out / "example"
        shutil.copytree(EXAMPLE, site, ignore=shutil.ignore_patterns("__pycache__"))
        config = site / "mkdocs.yml"
        text = config.read_text(encoding="utf-8")
        assert change[0] in text
        config.write_text(text.replace(change[0], change[1]), encoding="utf-8")
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-d", str(out / "site")], cwd=site, capture_output=True,
                          text=True, env=MKDOCS_ENV)
    assert proc.returncode == 0, proc.stderr
    return out / "site"


def _index(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _config_of(html: str) -> dict:
    """Material's ``__config`` of a page."""
    return json.loads(_CONFIG.search(html).group(1))


def _config(page: Path) -> dict:
    return _config_of(page.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    return _build(tmp_path_factory.mktemp("search-site"))


def test_the_french_index_holds_the_french_pages_only_in_french(built):
    english, french = _index(built / "search/search_index.json"), _index(built / "fr/search/search_index.json")
    assert english["config"]["lang"] == ["en"] and french["config"]["lang"] == ["fr"]
    # The same pages, each once, at locations relative to the language's root
    assert [d["location"] for d in french["docs"]] == [d["location"] for d in english["docs"]]
    assert not any(d["location"].startswith("fr/") for d in english["docs"] + french["docs"])
    for page in ("", "guide/install/", "guide/concepts/"):
        title = {d["title"] for d in french["docs"] if d["location"] == page}
        html = (built / "fr" / page / "index.html").read_text(encoding="utf-8")
        h1 = re.search(r"<h1[^>]*>(.*?)<a", html, re.S).group(1).strip()
        assert title == {h1}, (page, title, h1)
        assert {d["title"] for d in english["docs"] if d["location"] == page} != title


def test_each_page_searches_its_language_root_in_the_plugins_worker(built):
    french, english = _config(built / "fr/guide/install/index.html"), _config(built / "guide/install/index.html")
    assert french["base"] == "../../../fr/" and english["base"] == "../.."
    worker = re.fullmatch(r"(.*)/po-i18n-search\.js\?worker=(search\.[0-9a-f]+\.min\.js)", french["search"])
    assert worker and worker.group(1) == "../../../assets/javascripts/workers", french["search"]
    assert (built / "assets/javascripts/workers" / worker.group(2)).is_file()  # Material's, in the same folder
    assert english["search"].startswith("../../assets/javascripts/workers/po-i18n-search.js?worker=search.")
    assert "/assets/javascripts/workers/po-i18n-search.js?worker=search." in _config(built / "404.html")["search"]
    assert (built / WORKER).read_text(encoding="utf-8").startswith("// The po-i18n plugin's search worker")
    assert not (built / "fr" / WORKER).exists()  # one copy, beside Material's worker and its lunr languages


@pytest.mark.parametrize("change", [
    ("  - po-i18n ", "  - po-i18n:\n      search_per_language: false\n "),
    ("plugins:\n  - search\n", "plugins:\n"),
], ids=["option-off", "no-search-plugin"])
def test_switched_off_or_without_search_nothing_changes(tmp_path, change):
    site = _build(tmp_path, change)
    assert not (site / WORKER).exists() and not (site / "fr/search").exists()
    page = _config(site / "fr/guide/install/index.html")
    assert page["base"] == "../../.."  # mkdocs-static-i18n's: the site root, where its merged index is
    assert re.fullmatch(r"\.\./\.\./\.\./assets/javascripts/workers/search\.[0-9a-f]+\.min\.js", page["search"])
    if change[0].startswith("  - po-i18n"):  # the merged index, both languages in one pipeline
        merged = _index(site / "search/search_index.json")
        assert {d["location"].startswith("fr/") for d in merged["docs"]} == {True, False}
        assert merged["config"]["lang"] == ["en", "fr"]
    else:
        assert not (site / "search").exists()


def test_a_config_is_rewritten_once_and_a_root_page_gets_its_language_folder():
    """``base`` of a page at the root of its build is ``.``; a second pass (a page rendered
    twice by ``mkdocs serve``) changes nothing."""
    from po_i18n.search import rewrite_config

    page = ('<script id="__config" type="application/json">{"base":".","search":'
            '"assets/javascripts/workers/search.0123abcd.min.js"}</script>')
    once = rewrite_config(page, "fr", "en")
    assert _config_of(once) == {"base": "fr/", "search": "assets/javascripts/workers/po-i18n-search.js"
                                                         "?worker=search.0123abcd.min.js"}
    assert _config_of(rewrite_config(page, "en", "en"))["base"] == "."
    assert _config_of(rewrite_config(once, "en", "en")) == _config_of(once)
    assert rewrite_config("<p>another theme</p>", "fr", "en") == "<p>another theme</p>"
