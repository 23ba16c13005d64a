"""In the preview (``po-i18n serve``), a reader scrolled down a page who saves a catalog
finds the page reloaded at the same place (po_i18n.preview's script), in a real browser:
Playwright driving Debian's Chromium (shared/BROWSER-FACTS.md).
"""
from __future__ import annotations

import time
import urllib.error
import urllib.request

import polib
import pytest

from conftest import copy_project
from coursekit.net import free_port
from site_server import preview_server
from test_reader_site import ARGS, CHROMIUM, _require_chromium

pytestmark = pytest.mark.browser

PAGE = "ddp-basics"


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5):
            return True
    except (urllib.error.URLError, OSError):
        return False


def test_the_live_reload_after_a_catalog_save_keeps_the_readers_place(tmp_path):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    root = copy_project(tmp_path)
    port = free_port()
    url = f"http://127.0.0.1:{port}/sv/{PAGE}/"
    log = tmp_path / "serve.log"
    with preview_server(root, log, port=port) as (server, _):
        deadline = time.monotonic() + 180
        while not _up(url):
            assert server.poll() is None and time.monotonic() < deadline, f"no preview:\n{log.read_text()}"
            time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url)
            page.locator("html[data-course-scripts=started]").wait_for(state="attached", timeout=30_000)
            # Well down the page: the fifth h2 section's heading, 100 px below the viewport's top.
            heading = page.evaluate("""() => {
                const h = document.querySelectorAll("article h2")[4];
                h.scrollIntoView(); window.scrollBy(0, -100); return h.id; }""")
            page.wait_for_timeout(500)  # the sections that came into view are laid out
            where = f"document.getElementById({heading!r}).getBoundingClientRect().top"
            before = page.evaluate(where)
            assert page.evaluate("window.scrollY") > 2000, "the page is too short to test this"
            page.evaluate("window.poI18nBeforeSave = true")
            path = root / "i18n" / "sv" / f"{PAGE}.po"  # a translator lengthens the page's first paragraph
            catalog = polib.pofile(str(path), wrapwidth=79)
            entry = next(e for e in catalog if e.comment == "paragraph" and e.msgstr)
            entry.msgstr += " Ett tillägg som gör stycket längre, så att allt under det flyttar sig nedåt."
            catalog.save(str(path))
            page.wait_for_function("() => !window.poI18nBeforeSave", timeout=120_000)  # reloaded: a new document
            page.locator("html[data-course-scripts=started]").wait_for(state="attached", timeout=30_000)
            page.wait_for_load_state("load")
            page.wait_for_timeout(500)
            assert "Ett tillägg som gör stycket längre" in page.content(), "the reload did not show the edit"
            after = page.evaluate(where)
            scrolled = page.evaluate("window.scrollY")
            browser.close()
    assert abs(after - before) <= 4, (f"heading #{heading} was {before:.0f} px below the viewport's top before the "
                                      f"reload and {after:.0f} px after it (scrollY {scrolled})")
