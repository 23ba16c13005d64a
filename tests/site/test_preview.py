"""The one-language preview: ``po-i18n serve --lang sv`` builds English and Swedish only."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import polib
import pytest
from bs4 import BeautifulSoup

from conftest import ROOT, TRANSLATIONS, copy_project, replace_once
from site_server import MKDOCS, MKDOCS_ENV, page_text, preview_server
from coursekit.net import free_port

pytestmark = pytest.mark.site

PO_I18N = [sys.executable, "-m", "po_i18n"]


def _status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code
    except OSError:
        return None


def test_course_serve_with_a_language_serves_english_and_that_language_only():
    port = free_port()
    server = subprocess.Popen([*PO_I18N, "serve", "--lang", "sv", "--dev-addr", f"127.0.0.1:{port}"], cwd=ROOT,
                              env=MKDOCS_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while _status(f"http://127.0.0.1:{port}/sv/ddp-basics/") != 200:
            assert server.poll() is None and time.monotonic() < deadline, "po-i18n serve --lang sv did not serve sv/"
            time.sleep(0.5)
        assert _status(f"http://127.0.0.1:{port}/ddp-basics/") == 200
        for other in set(TRANSLATIONS) - {"sv"}:
            assert _status(f"http://127.0.0.1:{port}/{other}/ddp-basics/") == 404, other
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/sv/ddp-basics/", timeout=5) as response:
            soup = BeautifulSoup(response.read().decode("utf-8"), "html.parser")
        assert {a["hreflang"] for a in soup.select("a.md-select__link")} == {"en", "sv"}
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        _, log = server.communicate(timeout=30)
    assert "preview of en, sv only (PO_I18N_PREVIEW_LANGUAGES); not built: ru, ja, tr" in log, log


def test_a_strict_build_refuses_a_preview_of_some_languages(tmp_path):
    copy_project(tmp_path)
    env = {**MKDOCS_ENV, "PO_I18N_PREVIEW_LANGUAGES": "sv"}
    proc = subprocess.run([*MKDOCS, "build", "--strict"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    assert "PO_I18N_PREVIEW_LANGUAGES=sv builds only some languages; a strict build needs every language" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (tmp_path / "site" / "ru").exists()


def test_an_unknown_preview_language_is_named():
    proc = subprocess.run([*PO_I18N, "serve", "--lang", "xx"], cwd=ROOT, capture_output=True, text=True, env=MKDOCS_ENV)
    assert proc.returncode == 2
    assert "unknown language(s) xx" in proc.stderr and "Traceback" not in proc.stderr


def _count(log: Path, text: str) -> int:
    return log.read_text(encoding="utf-8", errors="replace").count(text)


def _wait_for(server: subprocess.Popen, log: Path, text: str, times: int, what: str) -> None:
    deadline = time.monotonic() + 120
    while _count(log, text) < times:
        assert server.poll() is None and time.monotonic() < deadline, f"{what}; the server's log:\n{log.read_text()}"
        time.sleep(0.5)


def test_the_preview_names_a_broken_catalog_on_every_rebuild_not_only_the_first(tmp_path):
    """A translator saving a catalog that still does not parse is told file and line each
    time (MkDocs's duplicate filter would print it on the first failed rebuild only)."""
    project = copy_project(tmp_path)
    catalog = project / "i18n" / "sv" / "ddp-basics.po"
    lines = catalog.read_text(encoding="utf-8").split("\n")
    number = next(i for i, line in enumerate(lines, 1) if line.startswith('msgstr "') and line != 'msgstr ""')
    log = tmp_path / "serve.log"
    port = free_port()
    with preview_server(project, log, port=port) as (server, _):
        _wait_for(server, log, "Serving on", 1, "po-i18n serve --lang sv did not start")
        broken = lines.copy()
        broken[number - 1] = broken[number - 1][:-1]  # the msgstr's closing quote
        expected = f"i18n/sv/ddp-basics.po:{number}: unterminated string"
        for save in (1, 2):
            catalog.write_text("\n".join(broken), encoding="utf-8")
            _wait_for(server, log, "An error happened during the rebuild", save, f"save {save} was not rebuilt")
            assert _count(log, expected) == save, f"save {save}: {expected!r} not printed again:\n{log.read_text()}"
            time.sleep(1.5)  # past the watcher's debounce, so the next save is a new change
    assert "Traceback" not in log.read_text()


def test_a_preview_of_some_languages_warns_about_those_only(tmp_path):
    """``po-i18n serve --lang sv`` builds English and Swedish: a problem of a Russian catalog
    is not the Swedish translator's to see, while the same problem in Swedish is named."""
    import polib

    copy_project(tmp_path)
    for language in ("ru", "sv"):
        path = tmp_path / "i18n" / language / "index.po"
        catalog = polib.pofile(str(path), wrapwidth=79)
        next(e for e in catalog if e.msgid and e.msgstr).msgstr = ""
        catalog.save(str(path))
    env = {**MKDOCS_ENV, "PO_I18N_PREVIEW_LANGUAGES": "sv"}
    proc = subprocess.run([*MKDOCS, "build"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "index.md: 1 of " in proc.stderr and "in 'sv' and are shown in English" in proc.stderr, proc.stderr
    assert "'ru'" not in proc.stderr and "i18n/ru/" not in proc.stderr, proc.stderr


def test_the_preview_rewrites_a_program_page_when_its_interface_catalog_changes(tmp_path):
    """Program pages (hooks/program_pages.py) are skipped by dirty rebuilds unless what they
    are made from changed: a translator's edit of the course's interface catalog shows on
    them at the next rebuild, as on every other page."""
    root = copy_project(tmp_path)
    catalog = root / "i18n" / "sv" / "_course.po"
    heading = next(e.msgstr for e in polib.pofile(str(catalog)) if e.msgid == "Run it")
    url = "sv/programs/ddp_basics/train/"
    with preview_server(root, tmp_path / "serve.log") as (server, port):
        deadline = time.monotonic() + 180
        while _status(f"http://127.0.0.1:{port}/{url}") != 200:
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "serve.log").read_text()
            time.sleep(0.5)
        time.sleep(1)  # the watcher settles after the first build
        replace_once(catalog, f'msgstr "{heading}"', f'msgstr "{heading} nu"')
        deadline = time.monotonic() + 120
        while f"{heading} nu" not in (page_text(f"http://127.0.0.1:{port}/{url}") or ""):
            assert time.monotonic() < deadline, f"{url} still shows the old heading\n{(tmp_path / 'serve.log').read_text()}"
            time.sleep(0.5)
