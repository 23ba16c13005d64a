"""``po-i18n serve`` renders again only what an edit changes (po_i18n.dirty): a catalog
edit its own page in its own language, an English edit that page in every language built."""
from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from example_site import EXAMPLE, MKDOCS_ENV

pytestmark = pytest.mark.site


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _page(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()
    except OSError:
        return ""


def _wait(predicate, what: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def test_an_edit_renders_again_only_the_pages_it_changes(tmp_path):
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("site", ".cache"))
    log = tmp_path / "serve.log"
    port = _free_port()
    temporary = tmp_path / "tmp"  # where mkdocs serve makes its site folder (tempfile.mkdtemp)
    temporary.mkdir()
    with open(log, "w") as out:
        server = subprocess.Popen([sys.executable, "-m", "po_i18n", "serve", "--lang", "fr", "-a", f"127.0.0.1:{port}", "-v"],
                                  cwd=root, env={**MKDOCS_ENV, "TMPDIR": str(temporary), "SITE_URL": f"http://127.0.0.1:{port}/"}, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait(lambda: "Serving on" in log.read_text(), "the first build")
        (site,) = temporary.glob("mkdocs_*")

        def rendered_by(edit, url: str, marker: str) -> list[str]:
            """The pages an edit rewrote (their HTML; the theme's 404 page is always rebuilt),
            once ``marker`` is served at ``url``."""
            before = {p: p.stat().st_mtime_ns for p in site.rglob("*.html") if p.name != "404.html"}
            time.sleep(0.05)
            edit()
            _wait(lambda: marker in _page(f"http://127.0.0.1:{port}/{url}"), f"{marker} on /{url}")
            time.sleep(1)  # the rebuild's last writes
            return sorted(p.relative_to(site).as_posix() for p, t in before.items() if p.stat().st_mtime_ns != t)

        catalog = root / "i18n" / "fr" / "guide" / "install.po"
        text = catalog.read_text(encoding="utf-8")
        msgstr = re.search(r'\nmsgstr "([^"\n]+)"\n', text)
        edited = text[:msgstr.end(1)] + " MARKER1" + text[msgstr.end(1):]
        assert rendered_by(lambda: catalog.write_text(edited, encoding="utf-8"), "fr/guide/install/", "MARKER1") \
            == ["fr/guide/install/index.html"]

        page = root / "docs" / "guide" / "concepts.md"
        english = page.read_text(encoding="utf-8")
        edited = english.replace("\n\n", "\n\nMARKER2 appears in English.\n\n", 1)
        assert rendered_by(lambda: page.write_text(edited, encoding="utf-8"), "fr/guide/concepts/", "MARKER2") \
            == ["fr/guide/concepts/index.html", "guide/concepts/index.html"]  # French: in English, under its notice
    finally:
        server.terminate()
        server.wait(timeout=30)
