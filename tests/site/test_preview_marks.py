"""The preview outlines what needs work: ``po-i18n serve --lang sv`` marks each message
shown in English with its catalog line (po_i18n.preview), and a build never does.

Both tests use one scratch copy of the project whose Swedish DDP catalog has one entry
made fuzzy and one msgstr emptied.
"""
from __future__ import annotations

import subprocess
import time
from pathlib import Path

import polib
import pytest
from bs4 import BeautifulSoup

from conftest import copy_project
from coursekit.net import free_port
from site_server import MKDOCS, MKDOCS_ENV, page_text, preview_server

pytestmark = pytest.mark.site

PAGE = "ddp-basics"
CATALOG = f"i18n/sv/{PAGE}.po"
MARKS = ("po-i18n-fuzzy", "po-i18n-untranslated", "po-i18n-refused")


def _msgstr_line(path: Path, msgid: str) -> int:
    """The 1-based line of the msgstr of ``msgid``'s entry, read from the file as it is."""
    entry = next(e for e in polib.pofile(str(path)) if e.msgid == msgid)
    lines = path.read_text(encoding="utf-8").split("\n")
    return next(n for n in range(entry.linenum, len(lines) + 1) if lines[n - 1].startswith("msgstr"))


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """``(the copy, {"fuzzy": (msgid, line), "untranslated": (msgid, line), "translated": msgstr})``:
    the second paragraph of the Swedish DDP catalog made fuzzy, the third emptied, the
    fourth left translated."""
    root = copy_project(tmp_path_factory.mktemp("marks"))
    path = root / CATALOG
    catalog = polib.pofile(str(path), wrapwidth=79)
    paragraphs = [e for e in catalog if e.comment == "paragraph" and e.msgstr and not e.fuzzy]
    fuzzy, emptied, kept = paragraphs[1], paragraphs[2], paragraphs[3]
    fuzzy.flags.append("fuzzy")
    emptied.msgstr = ""
    catalog.save(str(path))
    return root, {"fuzzy": (fuzzy.msgid, _msgstr_line(path, fuzzy.msgid)),
                  "untranslated": (emptied.msgid, _msgstr_line(path, emptied.msgid)), "translated": kept.msgstr}




def _first_words(msgid: str) -> str:
    """The start of a message's text as the page shows it (before any inline markup)."""
    return msgid.split("`")[0].split("[")[0].split("*")[0].strip()[:20]


def test_the_preview_outlines_fuzzy_and_untranslated_messages_with_their_catalog_line(project):
    root, planted = project
    port = free_port()
    log = root / "serve.log"
    with preview_server(root, log, port=port) as (server, _):
        deadline = time.monotonic() + 180
        while (html := page_text(f"http://127.0.0.1:{port}/sv/{PAGE}/")) is None:
            assert server.poll() is None and time.monotonic() < deadline, f"no preview:\n{log.read_text()}"
            time.sleep(0.5)
        english = page_text(f"http://127.0.0.1:{port}/{PAGE}/")
    soup = BeautifulSoup(html, "html.parser")
    marked = {(span["class"][0], span["title"]): span.get_text() for span in soup.select(", ".join(f"span.{m}" for m in MARKS))}
    msgid, line = planted["fuzzy"]
    fuzzy = (MARKS[0], f"{CATALOG}:{line}: fuzzy")
    msgid2, line2 = planted["untranslated"]
    untranslated = (MARKS[1], f"{CATALOG}:{line2}: untranslated")
    assert set(marked) == {fuzzy, untranslated}, marked
    assert marked[fuzzy].startswith(_first_words(msgid)), marked[fuzzy]
    assert marked[untranslated].startswith(_first_words(msgid2)), marked[untranslated]
    for span in soup.select(", ".join(f"span.{m}" for m in MARKS)):
        assert span["lang"] == "en" and span.parent.name == "p", span  # the English paragraph, marked whole
    # a translated paragraph carries no mark, and neither does anything around it
    translated = next(p for p in soup.select("article p") if p.get_text().startswith(_first_words(planted["translated"])))
    assert not translated.select("[class^=po-i18n-]") and not translated.find_parent(class_=list(MARKS))
    for page in (soup, BeautifulSoup(english, "html.parser")):  # the style and the place keeper, in every language
        assert page.select_one("head > style#po-i18n-preview-style") and page.select_one("body script#po-i18n-preview-script")


def test_a_build_of_the_same_catalogs_has_no_mark_and_no_preview_script(project):
    """``mkdocs build`` (not strict: a strict build refuses the fuzzy entry) shows the
    two messages in English, as the preview does, and marks nothing."""
    root, planted = project
    env = {**MKDOCS_ENV, "PO_I18N_PREVIEW_LANGUAGES": "sv"}  # English and Swedish only: the same pages, sooner
    proc = subprocess.run([*MKDOCS, "build"], cwd=root, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    site = root / "site"
    page = BeautifulSoup((site / "sv" / PAGE / "index.html").read_text(encoding="utf-8"), "html.parser")
    english = {span.get_text()[:20] for span in page.select('article span[lang="en"]')}
    for kind in ("fuzzy", "untranslated"):
        assert any(text.startswith(_first_words(planted[kind][0])) for text in english), (kind, english)
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "po-i18n-" not in text.replace("po-i18n-search", ""), html  # mark, style and script alike
