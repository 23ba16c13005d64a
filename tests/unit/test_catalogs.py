"""Catalog workflow: update merges like msgmerge, check reports bad catalogs in one line each."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import polib
import pytest

from conftest import ROOT, copy_project
from coursekit import cli
from coursekit.check import format_problems
from coursekit.extract import update
from coursekit.project import Project

DATA = Path(__file__).parent / "catalogs"


@pytest.fixture
def project(tmp_path) -> Project:
    """A copy of the course's pages, config and catalogs to change freely (with the hooks
    mkdocs.yml names, since the safety check reads mkdocs.yml as MkDocs does)."""
    return Project.load(copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks")) / "mkdocs.yml")


def _entries(path: Path) -> dict[str, str]:
    """Each live entry's exact text in the file, by msgid."""
    return {e.msgid: str(e) for e in polib.pofile(str(path), wrapwidth=79) if not e.obsolete}


def test_committed_catalogs_are_in_sync_with_the_english(project):
    report = update(project)
    assert report.written == [], "run: course update (and translate what it marks)"


def test_update_twice_changes_nothing(project):
    update(project)
    before = {p: p.read_bytes() for p in project.i18n_dir.rglob("*.po")}
    assert update(project).written == []
    assert {p: p.read_bytes() for p in project.i18n_dir.rglob("*.po")} == before


def test_an_english_edit_makes_exactly_that_message_fuzzy_in_every_language(project):
    page = project.docs_dir / "ddp-basics.md"
    old = "The batch size you give the `DataLoader` is per process."
    new = "The batch size you pass to the `DataLoader` is per process."
    before = {lang: _entries(project.catalog_path(lang, "ddp-basics.md")) for lang in project.languages}
    page.write_text(page.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    update(project)
    for lang in project.languages:
        catalog = polib.pofile(str(project.catalog_path(lang, "ddp-basics.md")))
        fuzzy = catalog.fuzzy_entries()
        assert len(fuzzy) == 1, lang
        assert fuzzy[0].msgid.startswith(new) and fuzzy[0].previous_msgid.startswith(old)
        assert fuzzy[0].msgstr  # the old translation is kept as a suggestion
        after = _entries(project.catalog_path(lang, "ddp-basics.md"))
        unchanged = {m: t for m, t in before[lang].items() if not m.startswith(old)}
        assert {m: after[m] for m in unchanged} == unchanged  # every other entry byte for byte


def test_reflowing_english_makes_nothing_fuzzy(project):
    page = project.docs_dir / "ddp-basics.md"
    text = page.read_text(encoding="utf-8")
    # Re-wrap every paragraph line pair: join the first two lines of each prose paragraph.
    reflowed = re.sub(r"(?m)^([A-Z][^\n`|#/-][^\n]*)\n([a-z`][^\n]*)$", r"\1 \2", text)
    assert reflowed != text
    page.write_text(reflowed, encoding="utf-8")
    report = update(project)
    assert report.written == []


def test_a_removed_paragraph_becomes_obsolete_not_deleted(project):
    page = project.docs_dir / "ddp-basics.md"
    text = page.read_text(encoding="utf-8")
    paragraph = "The batch size you give the `DataLoader` is per process. With two processes and a batch\nsize of 16, each optimizer step sees 32 samples in total.\n\n"
    assert paragraph in text
    page.write_text(text.replace(paragraph, ""), encoding="utf-8")
    update(project)
    for lang in project.languages:
        catalog = polib.pofile(str(project.catalog_path(lang, "ddp-basics.md")))
        gone = [e for e in catalog.obsolete_entries() if e.msgid.startswith("The batch size")]
        assert len(gone) == 1 and gone[0].msgstr
        assert not catalog.fuzzy_entries()


def test_a_new_language_needs_one_command_and_one_config_line(project):
    config = project.root / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "        - locale: sv\n", "        - locale: de\n          name: Deutsch\n          build: true\n        - locale: sv\n"),
        encoding="utf-8")
    assert cli.main(["--config", str(config), "update", "--lang", "de"]) == 0
    catalog = polib.pofile(str(project.i18n_dir / "de" / "ddp-basics.po"))
    assert catalog.metadata["Language"] == "de"
    assert catalog.metadata["Plural-Forms"].startswith("nplurals=2;")
    assert catalog.percent_translated() == 0 and len(catalog) > 10


BAD = {
    "unterminated-string.po": (11, "unterminated string"),
    "wrong-plural-count.po": (10, "2 plural forms, 'ru' needs 3"),
    "missing-header.po": (1, "missing header"),
    "duplicate-msgid.po": (13, "duplicate msgid 'Verified'"),
    "invalid-utf8.po": (11, "not valid UTF-8"),
    "crlf-line-ends.po": (1, "CRLF line ends"),
    "edited-msgid.po": (10, "msgid 'Verified!' is not in the English source"),
    "broken-placeholder.po": (17, "placeholder %(cnt)d is not in the msgid; use one of: %(count)d"),
    "unsafe-html.po": (11, "adds raw HTML <script>; the English is shown instead: keep the msgid's"),  # the msgstr's line
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_catalog_gets_one_line_naming_file_and_line(project, name, capsys):
    target = project.site_catalog_path("ru")
    shutil.copy(DATA / name, target)
    status = cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "ru"])
    out = capsys.readouterr()
    line, phrase = BAD[name]
    problems = [l for l in out.out.splitlines() if l.startswith("i18n/ru/_site.po:")]
    assert status == 1
    assert any(l.startswith(f"i18n/ru/_site.po:{line}: ") and phrase in l for l in problems), out.out
    assert "Traceback" not in out.out + out.err


def test_the_valid_sample_passes_check(project, capsys):
    shutil.copy(DATA / "valid.po", project.site_catalog_path("ru"))
    cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "ru"])
    assert not [l for l in capsys.readouterr().out.splitlines() if l.startswith("i18n/ru/_site.po:")]


def test_every_committed_catalog_passes_check(capsys):
    assert cli.main(["--config", str(ROOT / "mkdocs.yml"), "check"]) == 0, capsys.readouterr().out


def _msgfmt() -> str:
    path = shutil.which("msgfmt")
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("msgfmt is missing under CI: .ci/run must install Debian's gettext")
        pytest.skip("Requires: [GNU gettext msgfmt] (apt-get install gettext)")
    return path


@pytest.mark.parametrize("catalog", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "i18n").rglob("*.po")))
def test_gnu_msgfmt_accepts_every_catalog(catalog):
    proc = subprocess.run([_msgfmt(), "--check", "-o", os.devnull, str(ROOT / catalog)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("name", ["unterminated-string.po", "wrong-plural-count.po", "duplicate-msgid.po", "invalid-utf8.po"])
def test_gnu_msgfmt_agrees_the_planted_faults_are_faults(name):
    proc = subprocess.run([_msgfmt(), "--check", "-o", os.devnull, str(DATA / name)], capture_output=True, text=True)
    assert proc.returncode != 0


@pytest.mark.parametrize("command", [[], ["update"], ["stats"], ["check"]])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([*command, "--help"])
    assert exit_.value.code == 0
    assert "usage: course" in capsys.readouterr().out


def test_stats_min_threshold_sets_the_exit_status(project, capsys):
    config = str(project.root / "mkdocs.yml")
    assert cli.main(["--config", config, "stats", "--min", "100"]) == 0
    (project.docs_dir / "new-page.md").write_text("# A new page { #a-new-page }\n\nNothing translated yet.\n", encoding="utf-8")
    update(project)
    assert cli.main(["--config", config, "stats", "--min", "100"]) == 1
    out = capsys.readouterr()
    assert "i18n/ru/new-page.po: 0.0% translated, below --min 100%" in out.err


def test_python_format_placeholders_must_fill_like_the_msgid():
    assert format_problems("%(percent)d%%", "%(percent)d %%") == []
    assert format_problems("%(count)d process", "%(count)d процесс") == []
    assert format_problems("%(percent)d%%", "%(percent)d %") == [
        "a % at character 13 starts no placeholder; write a literal % as %%"]
    assert format_problems("%(backend)s on %(device)s", "%(backend)s на %(devise)s") == [
        "placeholder %(devise)s is not in the msgid; use one of: %(backend)s, %(device)s",
        "placeholder %(device)s of the msgid is missing"]


def test_check_says_when_valid_catalogs_are_not_finished(project, capsys):
    path = project.catalog_path("sv", "ddp-basics.md")
    catalog = polib.pofile(str(path))
    next(e for e in catalog if e.msgid and not e.obsolete).flags.append("fuzzy")
    catalog.save(str(path))
    assert cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "sv"]) == 0
    out = capsys.readouterr().out
    assert "all catalogs are valid" in out
    assert "i18n/sv/ddp-basics.po (1 fuzzy, 0 untranslated)" in out
