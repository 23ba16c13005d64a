"""A built site (issue 34): an entry with a ``msgctxt`` never replaces the real translation
on the page, and the build warns about it and about a catalog whose page is gone, each in
one line naming the catalog.

One scratch copy of the project, built loose with English and Russian only (the preview
languages of ``po-i18n serve --lang ru``).
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import copy_project
from site_server import MKDOCS, MKDOCS_ENV

pytestmark = pytest.mark.site

CONTEXT = '\n#. heading\n#: docs/index.md\nmsgctxt "menu"\nmsgid "Lessons"\nmsgstr "Не те уроки"\n'


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    root = copy_project(tmp_path_factory.mktemp("contexts"))
    catalog = root / "i18n" / "ru" / "index.po"
    catalog.write_text(catalog.read_text(encoding="utf-8") + CONTEXT, encoding="utf-8")  # after the real entry
    shutil.copy(catalog, root / "i18n" / "ru" / "old-index.po")  # as if docs/old-index.md had been renamed
    proc = subprocess.run([*MKDOCS, "build", "--no-strict"], cwd=root, capture_output=True, text=True,
                          env={**MKDOCS_ENV, "PO_I18N_PREVIEW_LANGUAGES": "ru"})
    assert proc.returncode == 0, proc.stderr
    return root, proc


def test_a_context_entry_is_not_shown(built):
    root, _ = built
    page = BeautifulSoup((root / "site" / "ru" / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert page.select_one("h2#lessons").get_text().rstrip("¶") == "Уроки"
    assert not [p for p in (root / "site").rglob("*.html") if "Не те уроки" in p.read_text(encoding="utf-8")]


def test_the_build_warns_about_the_context_and_the_orphaned_catalog(built):
    root, proc = built
    line = (root / "i18n" / "ru" / "index.po").read_text(encoding="utf-8").splitlines().index('msgctxt "menu"') + 1
    warnings = re.findall(r"^WARNING +- +(i18n/ru/(?:old-)?index\.po.*)$", proc.stderr, re.M)
    assert sorted(set(warnings)) == [
        "i18n/ru/index.po:%d: context 'menu' is not used by this site, so this translation is not shown; "
        "run po-i18n update, which offers it (as fuzzy) to the entry without a context, then delete this entry" % line,
        "i18n/ru/old-index.po: no English page docs/old-index.md; if the page was renamed, run po-i18n update, "
        "which offers its translations to the new page; then delete this file",
    ], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
