"""``course add-language``: a new language in a copy of the project, in one command.

The fast tests check what is written (mkdocs.yml as MkDocs loads it, the catalogs, the
glossary) and what is refused; the site test builds the copy strictly with the new
language carried unpublished.
"""
from __future__ import annotations

import difflib
import subprocess

import polib
import pytest
from mkdocs.config import load_config

from conftest import ROOT, copy_project
from coursekit.cli import main
from coursekit.languages import glossary_terms, published_languages
from po_i18n.project import Project
from site_server import MKDOCS, MKDOCS_ENV


# The language each test adds: the first of these mkdocs.yml does not list yet (all with two
# plural forms), so the tests still run after a maintainer has added German for real.
_CANDIDATES = (("de", "Deutsch", "German"), ("nl", "Nederlands", "Dutch"), ("da", "Dansk", "Danish"),
               ("fi", "Suomi", "Finnish"), ("hu", "Magyar", "Hungarian"))
NEW, NAME, ENGLISH = next(c for c in _CANDIDATES if c[0] not in Project.load(ROOT / "mkdocs.yml").languages)


@pytest.fixture
def project(tmp_path):
    return copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks", "snippets"))


def course(project, *args: str) -> int:
    return main(["--config", str(project / "mkdocs.yml"), "add-language", *args])


def _languages(config):
    """``{locale: (name, build)}`` of the i18n plugin in a config MkDocs loaded."""
    return {lang.locale: (lang.name, lang.build) for lang in config.plugins["i18n"].config.languages}


def test_it_adds_the_language_its_catalogs_and_a_glossary(project, capsys):
    before = (project / "mkdocs.yml").read_text(encoding="utf-8")
    assert course(project, NEW, NAME) == 0
    out = capsys.readouterr().out
    assert f"mkdocs.yml: added {NEW} ({NAME}; build: true)" in out
    after = (project / "mkdocs.yml").read_text(encoding="utf-8")
    # one entry added, every other line (comments, !ENV and !relative tags) as it was
    changed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-?"]
    assert changed == [f"+         - locale: {NEW}", f"+           name: {NAME}", "+           build: true"]
    config = load_config(str(project / "mkdocs.yml"))  # as mkdocs build reads it, plugins validated
    assert _languages(config)[NEW] == (NAME, True)
    loaded = Project.load(project / "mkdocs.yml")
    assert loaded.languages[-1] == NEW and published_languages(loaded)[-1] == NEW
    # the catalogs: the same files as every other language has (one per page, plus the interface catalogs)
    names = lambda lang: sorted(p.name for p in (project / "i18n" / lang).glob("*.po"))  # noqa: E731
    assert names(NEW) == names("ru") and len(names(NEW)) == len(loaded.pages()) + len(loaded.interface_strings)
    catalog = polib.pofile(str(project / "i18n" / NEW / "ddp-basics.po"))
    assert catalog.metadata["Language"] == NEW and catalog.metadata["Plural-Forms"].startswith("nplurals=2;")
    assert catalog.translated_entries() == [] and any(e.msgid == "Wrap the model" for e in catalog)
    glossary = (project / "i18n" / NEW / "glossary.md").read_text(encoding="utf-8")
    assert f"| English term | {ENGLISH} rendering | note |" in glossary
    terms = glossary_terms(Project.load(ROOT / "mkdocs.yml"))
    assert "process group" in terms and len(terms) > 50
    for term in terms:
        assert f"\n| {term} | | |\n" in glossary


def test_it_refuses_a_listed_language_and_an_unknown_locale(project, capsys):
    assert course(project, NEW, NAME) == 0
    written = (project / "mkdocs.yml").read_text(encoding="utf-8")
    capsys.readouterr()
    for args, message in (((NEW, NAME), f"language '{NEW}': mkdocs.yml lists it already"),
                          (("en", "English"), "language 'en': mkdocs.yml lists it already"),
                          (("xx", "Nowhere"), "language 'xx': Babel knows no such locale")):
        assert course(project, *args) == 2
        err = capsys.readouterr().err
        assert err.startswith(message) and err.count("\n") == 1, err  # one line
    assert (project / "mkdocs.yml").read_text(encoding="utf-8") == written
    assert not (project / "i18n" / "xx").exists()
    assert not list(project.glob(".mkdocs.yml*"))  # no scratch file left behind


@pytest.mark.site
def test_an_unpublished_language_is_carried_and_the_strict_build_passes(project, capsys):
    assert course(project, NEW, NAME, "--unpublished") == 0
    assert _languages(load_config(str(project / "mkdocs.yml")))[NEW] == (NAME, False)
    assert NEW not in published_languages(Project.load(project / "mkdocs.yml"))
    assert (project / "i18n" / NEW / "glossary.md").is_file()
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-q"], cwd=project, capture_output=True, text=True, env=MKDOCS_ENV)
    assert proc.returncode == 0, proc.stderr  # untranslated, yet not built: nothing to refuse
    assert (project / "site" / "ru" / "ddp-basics" / "index.html").is_file()
    assert not (project / "site" / NEW).exists()
    preview = subprocess.run([*MKDOCS, "build", "-q"], cwd=project, capture_output=True, text=True,
                             env={**MKDOCS_ENV, "PO_I18N_PREVIEW_LANGUAGES": NEW})  # po-i18n serve --lang <NEW>
    assert preview.returncode == 0, preview.stderr
    assert (project / "site" / NEW / "ddp-basics" / "index.html").is_file()  # a carried language can be previewed
