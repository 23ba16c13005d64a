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
    assert course(project, "de", "Deutsch") == 0
    out = capsys.readouterr().out
    assert "mkdocs.yml: added de (Deutsch; build: true)" in out
    after = (project / "mkdocs.yml").read_text(encoding="utf-8")
    # one entry added, every other line (comments, !ENV and !relative tags) as it was
    changed = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[:1] in "+-?"]
    assert changed == ["+         - locale: de", "+           name: Deutsch", "+           build: true"]
    config = load_config(str(project / "mkdocs.yml"))  # as mkdocs build reads it, plugins validated
    assert _languages(config)["de"] == ("Deutsch", True)
    loaded = Project.load(project / "mkdocs.yml")
    assert loaded.languages[-1] == "de" and published_languages(loaded)[-1] == "de"
    # the catalogs: the same files as every other language has (one per page, plus the interface catalogs)
    names = lambda lang: sorted(p.name for p in (project / "i18n" / lang).glob("*.po"))  # noqa: E731
    assert names("de") == names("ru") and len(names("de")) == len(loaded.pages()) + len(loaded.interface_strings)
    catalog = polib.pofile(str(project / "i18n" / "de" / "ddp-basics.po"))
    assert catalog.metadata["Language"] == "de" and catalog.metadata["Plural-Forms"].startswith("nplurals=2;")
    assert catalog.translated_entries() == [] and any(e.msgid == "Wrap the model" for e in catalog)
    glossary = (project / "i18n" / "de" / "glossary.md").read_text(encoding="utf-8")
    assert "| English term | German rendering | note |" in glossary
    terms = glossary_terms(Project.load(ROOT / "mkdocs.yml"))
    assert "process group" in terms and len(terms) > 50
    for term in terms:
        assert f"\n| {term} | | |\n" in glossary


def test_it_refuses_a_listed_language_and_an_unknown_locale(project, capsys):
    assert course(project, "de", "Deutsch") == 0
    written = (project / "mkdocs.yml").read_text(encoding="utf-8")
    capsys.readouterr()
    for args, message in ((("de", "Deutsch"), "language 'de': mkdocs.yml lists it already"),
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
    assert course(project, "de", "Deutsch", "--unpublished") == 0
    assert _languages(load_config(str(project / "mkdocs.yml")))["de"] == ("Deutsch", False)
    assert "de" not in published_languages(Project.load(project / "mkdocs.yml"))
    assert (project / "i18n" / "de" / "glossary.md").is_file()
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-q"], cwd=project, capture_output=True, text=True, env=MKDOCS_ENV)
    assert proc.returncode == 0, proc.stderr  # untranslated, yet not built: nothing to refuse
    assert (project / "site" / "ru" / "ddp-basics" / "index.html").is_file()
    assert not (project / "site" / "de").exists()
    preview = subprocess.run([*MKDOCS, "build", "-q"], cwd=project, capture_output=True, text=True,
                             env={**MKDOCS_ENV, "PO_I18N_PREVIEW_LANGUAGES": "de"})  # po-i18n serve --lang de
    assert preview.returncode == 0, preview.stderr
    assert (project / "site" / "de" / "ddp-basics" / "index.html").is_file()  # a carried language can be previewed
