"""``po-i18n update --keep-translations`` (issue 37): a writer's typo fix in an English page
keeps every language's translation current; anything more stays fuzzy, as without it.

Each test works on a copy of the course (pages, mkdocs.yml, catalogs, hooks) and runs the
real command. A typo fix needs a typo first: :func:`_plant_typo` writes one into the
English page and into every catalog's msgid (the state after the writer's last update,
translations current), and the test then fixes it in the page, as the writer does.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from conftest import TRANSLATIONS, copy_project, po_i18n_command, replace_once
from po_i18n import catalog as po
from po_i18n.keep import WAS_FUZZY
from po_i18n.project import Project
from site_server import MKDOCS, MKDOCS_ENV

PAGE = "index.md"
# The typo the writer fixes: one letter missing in the first paragraph of the home page.
RIGHT, WRONG = "course on training one model", "course on traning one model"
# How the command shows the change: the changed word with some words around it.
SHOWN = '"…hands-on course on traning one model with…" -> "…hands-on course on training one model with…"'


@pytest.fixture
def project(tmp_path, monkeypatch) -> Project:
    monkeypatch.chdir(tmp_path)
    return Project.load(copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks", "snippets")) / "mkdocs.yml")




def _entry(project: Project, language: str, containing: str):
    """The live entry of the page's catalog whose msgid contains ``containing``."""
    found = [e for e in po.load(project.catalog_path(language, PAGE)) if not e.obsolete and containing in e.msgid]
    assert len(found) == 1, (language, containing, found)
    return found[0]


def _plant_typo(project: Project) -> dict[str, str]:
    """The state before the writer's fix: :data:`WRONG` in the page and in every
    catalog's msgid, its translation current. Returns each language's msgstr."""
    replace_once(project.docs_dir / PAGE, RIGHT, WRONG)
    translations = {}
    for language in TRANSLATIONS:
        path = project.catalog_path(language, PAGE)
        catalog = po.load(path)
        entry = next(e for e in catalog if RIGHT in e.msgid and not e.obsolete)
        assert entry.msgstr and not entry.fuzzy
        entry.msgid = entry.msgid.replace(RIGHT, WRONG)
        translations[language] = entry.msgstr
        po.save(catalog, path)
    return translations


def _fix_typo(project: Project) -> None:
    replace_once(project.docs_dir / PAGE, WRONG, RIGHT)


def _kept_line(project: Project, language: str) -> str:
    path = project.catalog_path(language, PAGE)
    line = po.message_line(path.read_text(encoding="utf-8").splitlines(), _entry(project, language, RIGHT))
    return f"i18n/{language}/index.po:{line}: kept: {SHOWN}"


def test_a_one_letter_typo_fix_keeps_every_language_current(project, capsys):
    translations = _plant_typo(project)
    assert po_i18n_command(project, "check", capsys=capsys)[0] == 0  # the state before: complete
    _fix_typo(project)

    status, out, err = po_i18n_command(project, "update", "--keep-translations", capsys=capsys)
    assert (status, err) == (0, [])
    assert out == [*(_kept_line(project, language) for language in TRANSLATIONS),
                   *(f"updated i18n/{language}/index.po" for language in TRANSLATIONS),
                   f"{len(TRANSLATIONS)} translation(s) kept current, 0 left fuzzy for their translators",
                   f"{len(TRANSLATIONS)} catalog(s) updated, {len(list(project.i18n_dir.rglob('*.po'))) - len(TRANSLATIONS)} unchanged"]
    for language in TRANSLATIONS:
        entry = _entry(project, language, RIGHT)
        assert not entry.fuzzy and entry.previous_msgid is None, language
        assert entry.msgstr == translations[language]
        assert "#|" not in project.catalog_path(language, PAGE).read_text(encoding="utf-8")
        assert not [e for e in po.load(project.catalog_path(language, PAGE)) if e.obsolete and WRONG in e.msgid]
    # po-i18n check fails exactly when mkdocs build --strict fails on the catalogs
    assert po_i18n_command(project, "check", capsys=capsys)[0] == 0
    # and a second run has nothing left to do
    assert po_i18n_command(project, "update", "--keep-translations", capsys=capsys)[1][-2:] == [
        "0 translation(s) kept current, 0 left fuzzy for their translators",
        f"0 catalog(s) updated, {len(list(project.i18n_dir.rglob('*.po')))} unchanged"]


@pytest.mark.site
def test_after_a_kept_typo_fix_the_strict_build_passes(project, capsys):
    _plant_typo(project)
    _fix_typo(project)
    assert po_i18n_command(project, "update", "--keep-translations", capsys=capsys)[0] == 0
    proc = subprocess.run([*MKDOCS, "build", "--strict", "-q"], cwd=project.root, capture_output=True, text=True,
                          env=MKDOCS_ENV)
    assert proc.returncode == 0, proc.stderr
    for language in TRANSLATIONS:  # the translation is what the page shows, under no notice
        html = (project.root / "site" / language / "index.html").read_text(encoding="utf-8")
        assert "course-notice" not in html, language


# (what the writer changes in docs/index.md, the message it is in, what the reason says)
MORE_THAN_A_TYPO = {
    "a number": ("PyTorch 2.13 (the version", "PyTorch 2.14 (the version", "'3' became '4'"),
    "a code span": ("`backward()` and an", "`backwards()` and an", "it renders differently: inline code `backward()`"),
    "a link target": ("](ddp-basics.md): one process", "](ddp-basic.md): one process",
                      "it renders differently: link target 'ddp-basics.md' changed to 'ddp-basic.md'"),
    "emphasis": ("[**Data vs model parallelism**]", "[*Data vs model parallelism*]", "'*' became nothing"),
    "a rewording": ("A short, hands-on course", "A brief, hands-on course", "the word 'short' became 'brief'"),
}


@pytest.mark.parametrize("change", list(MORE_THAN_A_TYPO))
def test_more_than_a_typo_stays_fuzzy_in_every_language(project, change, capsys):
    old, new, reason = MORE_THAN_A_TYPO[change]
    page = project.docs_dir / PAGE
    before = {language: _entry(project, language, old.strip("[]`").split("`")[0]) for language in TRANSLATIONS}
    replace_once(page, old, new)

    status, out, err = po_i18n_command(project, "update", "--keep-translations", capsys=capsys)
    assert (status, err) == (0, [])
    said = [line for line in out if ": left fuzzy: " in line]
    assert len(said) == len(TRANSLATIONS) and not [line for line in out if ": kept: " in line], out
    for language, line in zip(TRANSLATIONS, said):
        assert re.match(rf"i18n/{language}/index\.po:\d+: left fuzzy: \".*\" -> \".*\": ", line), line
        assert reason in line, line
        entry = _entry(project, language, new.strip("[]`").split("`")[0])
        assert entry.fuzzy and entry.previous_msgid == before[language].msgid, language
        assert entry.msgstr == before[language].msgstr


def test_an_entry_fuzzy_before_stays_fuzzy(project, capsys):
    _plant_typo(project)
    first = TRANSLATIONS[0]
    path = project.catalog_path(first, PAGE)
    catalog = po.load(path)
    entry = next(e for e in catalog if WRONG in e.msgid)
    entry.flags.append("fuzzy")  # the translator has not confirmed it since an earlier change
    entry.previous_msgid = entry.msgid.replace("hands-on ", "")
    po.save(catalog, path)
    _fix_typo(project)

    status, out, _ = po_i18n_command(project, "update", "--keep-translations", capsys=capsys)
    assert status == 0
    assert [line for line in out if line.startswith(f"i18n/{first}/index.po:")] == [
        f'{_kept_line(project, first).replace(": kept: ", ": left fuzzy: ")}: {WAS_FUZZY}']
    after = _entry(project, first, RIGHT)
    assert after.fuzzy and after.previous_msgid == entry.msgid
    for language in TRANSLATIONS[1:]:
        assert not _entry(project, language, RIGHT).fuzzy, language


def test_a_translation_the_safety_check_refuses_stays_fuzzy(project, capsys):
    _plant_typo(project)
    last = TRANSLATIONS[-1]
    path = project.catalog_path(last, PAGE)
    catalog = po.load(path)
    entry = next(e for e in catalog if WRONG in e.msgid)
    assert entry.msgstr.count("`torchrun`") == 1
    entry.msgstr = entry.msgstr.replace("`torchrun`", "torchrun")  # drops a code span: refused, shown in English
    po.save(catalog, path)
    _fix_typo(project)

    status, out, _ = po_i18n_command(project, "update", "--keep-translations", capsys=capsys)
    assert status == 0
    said = [line for line in out if line.startswith(f"i18n/{last}/index.po:")]
    assert len(said) == 1 and ": left fuzzy: " in said[0], out
    assert f"{SHOWN}: its translation does not pass the safety check against the new English: " in said[0], said[0]
    assert said[0].endswith("inline code `torchrun` missing or changed"), said[0]
    assert _entry(project, last, RIGHT).fuzzy
    for language in TRANSLATIONS[:-1]:
        assert not _entry(project, language, RIGHT).fuzzy, language


def test_without_the_option_a_typo_fix_turns_fuzzy_as_before(project, capsys):
    _plant_typo(project)
    _fix_typo(project)
    catalogs = len(list(project.i18n_dir.rglob("*.po")))

    status, out, err = po_i18n_command(project, "update", capsys=capsys)
    assert (status, err) == (0, [])
    assert out == [*(f"updated i18n/{language}/index.po" for language in TRANSLATIONS),
                   f"{len(TRANSLATIONS)} catalog(s) updated, {catalogs - len(TRANSLATIONS)} unchanged"]
    for language in TRANSLATIONS:
        entry = _entry(project, language, RIGHT)
        assert entry.fuzzy and WRONG in entry.previous_msgid, language
    assert po_i18n_command(project, "check", capsys=capsys)[0] == 1  # and the strict build refuses the site


def test_dry_run_prints_the_same_and_writes_nothing(project, capsys):
    _plant_typo(project)
    _fix_typo(project)
    before = {p: p.read_bytes() for p in project.i18n_dir.rglob("*.po")}

    status, out, _ = po_i18n_command(project, "update", "--keep-translations", "--dry-run", capsys=capsys)
    assert status == 0
    assert {p: p.read_bytes() for p in project.i18n_dir.rglob("*.po")} == before
    dry = [line for line in out if ": kept: " in line]
    assert len(dry) == len(TRANSLATIONS) and all(line.endswith(SHOWN) for line in dry), out
    assert [f"would update i18n/{language}/index.po" for language in TRANSLATIONS] == \
        [line for line in out if line.startswith("would update")]
    assert out[-1] == f"{len(TRANSLATIONS)} catalog(s) would be updated, {len(before) - len(TRANSLATIONS)} unchanged " \
                      "(dry run: nothing written)"
    # the lines it printed are those the real run prints, line numbers included
    status, out, _ = po_i18n_command(project, "update", "--keep-translations", capsys=capsys)
    assert [line for line in out if ": kept: " in line] == dry
