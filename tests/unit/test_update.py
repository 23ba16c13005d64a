"""``po-i18n update`` loses nothing a translator wrote (issue 34), or refuses in one line.

Each test works on a copy of the course (pages, mkdocs.yml, catalogs) and a catalog a
translator could have written: comments, flags, header fields and header comments,
obsolete entries (``#~``, ``#~|``), a ``msgctxt`` entry, duplicates, and a catalog left
behind by a renamed page. Where GNU gettext is installed, ``msgmerge`` (the tool this one
mirrors) is asked the same questions.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import polib
import pytest

from conftest import copy_project, po_i18n_command, replace_once
from po_i18n import catalog as po
from po_i18n.extract import page_messages
from po_i18n.project import Project
from po_i18n.render import render

LANGUAGE = "ru"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Project:
    """A copy of the course's pages, config and catalogs (and the hooks mkdocs.yml names,
    which ``po-i18n check`` reads as MkDocs does), as the working directory: where a
    translator runs the course command."""
    monkeypatch.chdir(tmp_path)
    return Project.load(copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks")) / "mkdocs.yml")




def _snapshot(project: Project) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(project.i18n_dir.rglob("*.po"))}


def _tool(name: str) -> str:
    """A GNU gettext program; skipped without it (and a failure under CI, which installs it)."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{name} is missing under CI: .ci/run must install Debian's gettext")
        pytest.skip(f"Requires: [GNU gettext {name}] (apt-get install gettext)")
    return path


def _line_of(text: str, line: str) -> int:
    """The 1-based number of the only line equal to ``line``."""
    numbers = [n for n, l in enumerate(text.splitlines(), 1) if l == line]
    assert len(numbers) == 1, (line, numbers)
    return numbers[0]


# --- The catalog a translator wrote ---------------------------------------------------

HEADER = """\
# Distributed Training with PyTorch: 'ru' catalog. Translate msgstr only; see i18n/README.md.
# Translators:
# Анна Петрова <anna@example.org>, 2024.
#
#, fuzzy
msgid ""
msgstr ""
"Project-Id-Version: Distributed Training with PyTorch\\n"
"Report-Msgid-Bugs-To: translators@example.org\\n"
"PO-Revision-Date: 2024-05-01 12:00+0300\\n"
"Last-Translator: Анна Петрова <anna@example.org>\\n"
"Language-Team: Russian <ru@example.org>\\n"
"Language: ru\\n"
"MIME-Version: 1.0\\n"
"Content-Type: text/plain; charset=UTF-8\\n"
"Content-Transfer-Encoding: 8bit\\n"
"Plural-Forms: nplurals=3; plural=n % 10 == 1 && n % 100 != 11 ? 0 : n % 10 >= 2 && n % 10 <= 4 && (n % 100 < 12 || n % 100 > 14) ? 1 : 2;\\n"
"X-Generator: Poedit 3.4.2\\n"
"X-Poedit-Bookmarks: 3,-1,-1,-1,-1,-1,-1,-1,-1,-1\\n"
"""

# A fuzzy entry the translator kept fuzzy; a translator comment longer than a line (a
# blank comment line inside) and a flag of their own.
FUZZY_KEPT = """\
# Заголовок оставлен коротким: так он целиком помещается во вкладке браузера, даже на узком экране.
#
# (согласовано с редактором)
#. heading
#: docs/index.md
#, fuzzy, x-glossary-checked
#| msgid "Learn distributed training"
msgid "Learn distributed training with PyTorch"
msgstr "Изучаем распределённое обучение в PyTorch"
"""

# An untranslated entry with a question for the editor; its English will change.
UNTRANSLATED_COMMENT = "# Не уверена: «Что понадобится» или «Что нужно»? Спросить у редактора."
UNTRANSLATED = f"""\
{UNTRANSLATED_COMMENT}
#. heading
#: docs/index.md
msgid "What you need"
msgstr ""
"""

# A translated heading with a comment and flags; its English will change a little.
CHANGED = """\
# Во множественном числе, как в оглавлении.
#. heading
#: docs/index.md
#, no-wrap, x-reviewed
msgid "Lessons"
msgstr "Уроки"
"""

# An entry with a context: not this site's message, kept as it is.
CONTEXT = """\
# Для бокового меню: короче.
#. heading
#: docs/index.md
msgctxt "menu"
msgid "How the code is checked"
msgstr "Проверка кода"
"""

OBSOLETE = """\
# Старый заголовок, оставлен на память
#~ msgid "Old heading"
#~ msgstr "Старый заголовок"

# Переведено до переделки страницы
#, fuzzy
#~| msgid "An older paragraph, as it was."
#~ msgid "A paragraph that was removed."
#~ msgstr "Абзац, который удалили."

#~ msgctxt "sidebar"
#~ msgid "Lessons"
#~ msgstr "Уроки (боковая панель)"
"""

NO_WRAP_MSGID = "You already train models in PyTorch on one device"  # its paragraph's translation is on one line


def _no_wrap_block(text: str) -> tuple[str, str]:
    """The committed entry of the paragraph starting with :data:`NO_WRAP_MSGID`, and the
    same entry flagged ``no-wrap`` with its strings on one line each (as msgmerge writes
    a no-wrap entry)."""
    start = text.index("#. paragraph\n#: docs/index.md\nmsgid \"\"\n\"" + NO_WRAP_MSGID)
    end = text.index("\n\n", start) + 1
    entry = next(e for e in polib.pofile(text[start:end]) if e.msgid.startswith(NO_WRAP_MSGID))
    flagged = (f'#. paragraph\n#: docs/index.md\n#, no-wrap\nmsgid "{polib.escape(entry.msgid)}"\n'
               f'msgstr "{polib.escape(entry.msgstr)}"\n')
    return text[start:end], flagged


def _write_translators_catalog(project: Project) -> tuple[Path, str]:
    """``i18n/ru/index.po`` as a translator might leave it; returns the path and the text."""
    path = project.catalog_path(LANGUAGE, "index.md")
    text = path.read_text(encoding="utf-8")
    text = HEADER + text[text.index("\n\n"):]
    replacements = [
        ('#. heading\n#: docs/index.md\nmsgid "Learn distributed training with PyTorch"\n'
         'msgstr "Изучаем распределённое обучение в PyTorch"\n', FUZZY_KEPT),
        ('#. heading\n#: docs/index.md\nmsgid "What you need"\nmsgstr "Что понадобится"\n', UNTRANSLATED),
        ('#. heading\n#: docs/index.md\nmsgid "Lessons"\nmsgstr "Уроки"\n', CHANGED),
        _no_wrap_block(text),
    ]
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    text += "\n" + CONTEXT + "\n" + OBSOLETE
    path.write_text(text, encoding="utf-8")
    return path, text


def _change_english(project: Project) -> None:
    """Two headings of docs/index.md change: one untranslated, one translated."""
    page = project.docs_dir / "index.md"
    replace_once(page, "## What you need { #what-you-need }", "## What you need first { #what-you-need }")
    replace_once(page, "## Lessons { #lessons }", "## The lessons { #lessons }")


def _translator_flags(entry: polib.POEntry) -> list[str]:
    return [f for f in entry.flags if not f.endswith("-format")]


def _written(entry: polib.POEntry) -> tuple:
    """What a translator wrote in an entry, as polib reads it."""
    return (entry.msgctxt, entry.msgstr, dict(entry.msgstr_plural), entry.tcomment, _translator_flags(entry))


def test_update_keeps_every_byte_a_translator_wrote(project, capsys):
    """The acceptance test of issue 34: header comments, flags and fields, translator
    comments (long ones unwrapped), translator flags, a no-wrap translation, an entry
    with a context, obsolete entries with ``#~|``, an untranslated entry with a comment
    whose English changes, a translated one whose English changes: all survive, both as
    polib reads them (entry by entry) and as the raw lines the translator wrote."""
    path, before_text = _write_translators_catalog(project)
    _change_english(project)
    before = polib.pofile(before_text, wrapwidth=po.WRAP_WIDTH)

    status, out, err = po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)
    assert (status, err) == (0, []), err
    after_text = path.read_text(encoding="utf-8")
    after = polib.pofile(after_text, wrapwidth=po.WRAP_WIDTH)

    # Raw text: every block the translator wrote is there, byte for byte.
    no_wrap = before_text[before_text.index("#, no-wrap\nmsgid \"" + NO_WRAP_MSGID):]
    no_wrap = no_wrap[:no_wrap.index("\n\n") + 1]
    assert after_text.startswith(HEADER + "\n")
    for block in (FUZZY_KEPT, CONTEXT, OBSOLETE, no_wrap):
        assert block in after_text, block
    assert f'{UNTRANSLATED_COMMENT}\n#~ msgid "What you need"\n#~ msgstr ""\n' in after_text
    assert ('# Во множественном числе, как в оглавлении.\n#. heading\n#: docs/index.md\n'
            '#, no-wrap, x-reviewed, fuzzy\n#| msgid "Lessons"\nmsgid "The lessons"\nmsgstr "Уроки"\n') in after_text

    # polib, entry by entry: the header, then every entry a translator wrote in.
    assert after.header == before.header and after.metadata == before.metadata
    assert after.metadata_is_fuzzy == before.metadata_is_fuzzy == ["fuzzy"]
    moved = {"What you need": ("What you need", True), "Lessons": ("The lessons", False)}
    for entry in before:
        if not (entry.msgstr or entry.tcomment or _translator_flags(entry)):
            continue
        msgid, obsolete = moved.get(entry.msgid, (entry.msgid, entry.obsolete)) if entry.msgctxt is None \
            else (entry.msgid, entry.obsolete)
        found = [e for e in after if (e.msgctxt, e.msgid, bool(e.obsolete)) == (entry.msgctxt, msgid, bool(obsolete))]
        assert len(found) == 1, entry
        if entry.msgid == "Lessons" and entry.msgctxt is None:  # its English changed: fuzzy, nothing else
            assert found[0].fuzzy and found[0].previous_msgid == "Lessons"
            found[0].flags.remove("fuzzy")
        assert _written(found[0]) == _written(entry)
        if entry.fuzzy and not entry.obsolete:
            assert found[0].previous_msgid == entry.previous_msgid
    assert after.find("What you need first").msgstr == ""

    # Nothing changes on a second run; GNU msgfmt accepts the result.
    assert po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)[1][-1].startswith("0 catalog(s) updated, ")
    if shutil.which("msgfmt"):
        proc = subprocess.run(["msgfmt", "--check", "-o", os.devnull, str(path)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr


def test_gnu_msgmerge_keeps_the_same_translations(project, capsys):
    """Where both keep a translation as it is (not fuzzy, no context), ``po-i18n update``
    and ``msgmerge`` agree on every message of the page."""
    msgmerge = _tool("msgmerge")
    path, _ = _write_translators_catalog(project)
    _change_english(project)
    template = project.root / "index.pot"
    pot = polib.POFile(wrapwidth=po.WRAP_WIDTH)
    pot.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    for msgid in dict.fromkeys(m.msgid for m in page_messages(project, Path("index.md"))):
        pot.append(polib.POEntry(msgid=msgid, msgstr=""))
    pot.save(str(template))
    gnu = project.root / "gnu.po"
    proc = subprocess.run([msgmerge, "--quiet", "-o", str(gnu), str(path), str(template)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)

    def kept(catalog: polib.POFile) -> dict[str, str]:
        return {e.msgid: e.msgstr for e in catalog if e.translated() and e.msgctxt is None}

    ours, theirs = kept(polib.pofile(str(path))), kept(polib.pofile(str(gnu)))
    assert ours == theirs and len(ours) > 5


# --- Duplicates -------------------------------------------------------------------------

DUPLICATES = {
    # name: (text appended to the catalog, the repeated entry's msgid line, the first's)
    "two live entries": ('\nmsgid "Lessons"\nmsgstr "Занятия"\n', 'msgid "Lessons"', 'msgid "Lessons"'),
    "a live and an obsolete entry": ('\n#~ msgid "Lessons"\n#~ msgstr "Занятия"\n', '#~ msgid "Lessons"', 'msgid "Lessons"'),
    "two obsolete entries": ('\n#~ msgid "Gone"\n#~ msgstr "Ушло"\n\n#~ msgid "Gone"\n#~ msgstr "Пропало"\n',
                             '#~ msgid "Gone"', '#~ msgid "Gone"'),
}


def _plant_duplicate(project: Project, name: str) -> tuple[Path, int, int]:
    """A duplicate in the last catalog ``po-i18n update`` reaches: ``(path, line of the
    repeated entry, line of the first)``."""
    path = project.catalog_path(project.languages[-1], "index.md")
    appended, repeated, first = DUPLICATES[name]
    text = path.read_text(encoding="utf-8") + appended
    path.write_text(text, encoding="utf-8")
    lines = [n for n, l in enumerate(text.splitlines(), 1) if l in (repeated, first)]
    return path, lines[-1], lines[0] if first != repeated else lines[-2]


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_update_refuses_a_duplicate_naming_both_lines_and_writes_nothing(project, name, capsys):
    path, line, first = _plant_duplicate(project, name)
    _change_english(project)  # every language's index.po would change
    before = _snapshot(project)
    status, out, err = po_i18n_command(project, "update", capsys=capsys)
    shown = path.relative_to(project.root).as_posix()
    assert status == 2
    assert len(err) == 1 and err[0].startswith(f"{shown}:{line}: duplicate msgid "), err
    assert f"also at line {first};" in err[0] and "keep the entry with the translation you want" in err[0]
    assert "Traceback" not in "\n".join(out + err)
    assert _snapshot(project) == before  # no catalog of any language was written


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_check_reports_a_duplicate_at_both_lines(project, name, capsys):
    path, line, first = _plant_duplicate(project, name)
    status, out, _ = po_i18n_command(project, "check", "--lang", project.languages[-1], capsys=capsys)
    shown = path.relative_to(project.root).as_posix()
    assert status == 1
    assert [l for l in out if "duplicate" in l] == [
        l for l in out if l.startswith(f"{shown}:{line}: duplicate msgid ") and f"also at line {first};" in l]
    assert any(f"also at line {first};" in l for l in out), out


@pytest.mark.parametrize("name", sorted(DUPLICATES))
def test_gnu_msgmerge_refuses_the_same_duplicates(project, name):
    """The reference: msgmerge (gettext 0.21) refuses each planted duplicate, obsolete
    ones too, at the same line (it names the first entry by its msgstr line, one or two
    lines below the msgid line this project names)."""
    msgmerge = _tool("msgmerge")
    path, line, first = _plant_duplicate(project, name)
    proc = subprocess.run([msgmerge, "--quiet", "-o", os.devnull, str(path), str(path)], capture_output=True, text=True)
    assert proc.returncode != 0
    assert f"{path}:{line}: duplicate message definition" in proc.stderr
    where = re.search(rf"{re.escape(str(path))}:(\d+): \.\.\.this is the location of the first definition", proc.stderr)
    assert where and first <= int(where.group(1)) <= first + 2, proc.stderr


# --- Contexts ---------------------------------------------------------------------------

def test_an_entry_with_a_context_is_reported_not_shown_and_kept(project, capsys):
    path = project.catalog_path(LANGUAGE, "index.md")
    path.write_text(path.read_text(encoding="utf-8") + "\n" + CONTEXT.replace(
        'msgid "How the code is checked"\nmsgstr "Проверка кода"', 'msgid "Lessons"\nmsgstr "Не те уроки"'), encoding="utf-8")
    block = path.read_text(encoding="utf-8").split("\n\n")[-1]

    table = po.translations(po.load(path))
    assert table["Lessons"] == "Уроки"  # the entry without a context
    page = render((project.docs_dir / "index.md").read_text(encoding="utf-8"), table, engine=project.engine).markdown
    assert "## Уроки { #lessons }" in page and "Не те уроки" not in page

    status, out, _ = po_i18n_command(project, "check", "--lang", LANGUAGE, capsys=capsys)
    line = _line_of(path.read_text(encoding="utf-8"), 'msgctxt "menu"')
    assert status == 1
    assert f"i18n/ru/index.po:{line}: context 'menu' is not used by this site, so this translation is not shown; " \
           "run po-i18n update, which offers it (as fuzzy) to the entry without a context, then delete this entry" in out
    assert not [l for l in out if l.startswith("i18n/ru/index.po:") and "context" not in l], out

    po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)
    assert block in path.read_text(encoding="utf-8")  # kept as it is, not merged away


def test_a_context_entry_whose_plain_entry_is_gone_is_offered_to_it_as_fuzzy(project, capsys):
    """What a translator who followed an editor's suggestion meets: the entry without a
    context is missing (its text was moved under a msgctxt); update brings the plain entry
    back with that text as fuzzy, keeps the context entry, and the catalog has no duplicate."""
    path = project.catalog_path(LANGUAGE, "index.md")
    replace_once(path, 'msgid "Lessons"\nmsgstr "Уроки"', 'msgctxt "menu"\nmsgid "Lessons"\nmsgstr "Уроки"')
    po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)
    catalog = polib.pofile(str(path))
    plain = [e for e in catalog if e.msgid == "Lessons" and e.msgctxt is None and not e.obsolete]
    kept = [e for e in catalog if e.msgid == "Lessons" and e.msgctxt == "menu"]
    assert len(plain) == 1 and plain[0].msgstr == "Уроки" and plain[0].fuzzy and plain[0].previous_msgctxt == "menu"
    assert len(kept) == 1 and kept[0].msgstr == "Уроки"
    assert po.duplicates(po.load(path)) == []


# --- Translator comments, header, flags ------------------------------------------------

def test_an_untranslated_entry_whose_english_changes_keeps_its_comment_as_obsolete(project, capsys):
    path = project.catalog_path(LANGUAGE, "index.md")
    replace_once(path, '#. heading\n#: docs/index.md\nmsgid "What you need"\nmsgstr "Что понадобится"\n', UNTRANSLATED)
    _change_english(project)
    po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)
    gone = [e for e in polib.pofile(str(path)).obsolete_entries() if e.msgid == "What you need"]
    assert [e.tcomment for e in gone] == [UNTRANSLATED_COMMENT[2:]]


def test_header_fields_comments_and_flags_survive(project, capsys):
    path = project.catalog_path(LANGUAGE, "index.md")
    text = path.read_text(encoding="utf-8")
    path.write_text(HEADER + text[text.index("\n\n"):], encoding="utf-8")
    _change_english(project)
    po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)
    assert path.read_text(encoding="utf-8").startswith(HEADER + "\n")


def test_a_missing_header_field_is_added_and_the_others_are_the_translators(project, capsys):
    """As msgmerge: the PO file's fields stay (Project-Id-Version too), a missing one the
    site needs is added."""
    path = project.catalog_path(LANGUAGE, "index.md")
    replace_once(path, '"Plural-Forms: ', '"X-Old-Plural-Forms: ')
    replace_once(path, '"Project-Id-Version: Distributed Training with PyTorch\\n"', '"Project-Id-Version: Old Name\\n"')
    po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)
    meta = polib.pofile(str(path)).metadata
    assert meta["Plural-Forms"] == po.plural_forms(LANGUAGE) and meta["X-Old-Plural-Forms"]
    assert meta["Project-Id-Version"] == "Old Name"


def test_translator_flags_survive_and_the_extractor_decides_format_flags(project, capsys):
    page, site = project.catalog_path(LANGUAGE, "index.md"), project.interface_catalog_path(LANGUAGE, "course")
    replace_once(page, '#. heading\n#: docs/index.md\nmsgid "Who this course is for"\n',
             '#. heading\n#: docs/index.md\n#, wrap, python-format, x-reviewed\nmsgid "Who this course is for"\n')
    replace_once(site, '#, python-format\nmsgid "%(backend)s on %(device)s"\n',
             '#, no-wrap, no-python-format\nmsgid "%(backend)s on %(device)s"\n')
    _change_english(project)
    po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)
    assert polib.pofile(str(page)).find("Who this course is for").flags == ["wrap", "x-reviewed"]
    assert polib.pofile(str(site)).find("%(backend)s on %(device)s").flags == ["python-format", "no-wrap"]


# --- A renamed page ---------------------------------------------------------------------

ORPHAN_LINE = ("i18n/ru/ddp-basics.po: no English page docs/ddp-basics.md; if the page was renamed, run po-i18n update, "
               "which offers its translations to the new page; then delete this file")


def _rename_page(project: Project) -> tuple[Path, str, str]:
    """docs/ddp-basics.md becomes docs/ddp.md, one paragraph edited a little; returns the
    old catalog and the paragraph's old and new first line."""
    old, new = "The batch size you give the `DataLoader` is per process.", "The batch size you pass to the `DataLoader` is per process."
    source = project.docs_dir / "ddp-basics.md"
    (project.docs_dir / "ddp.md").write_text(source.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    source.unlink()
    return project.catalog_path(LANGUAGE, "ddp-basics.md"), old, new


def test_check_reports_a_catalog_whose_page_is_gone(project, capsys):
    _rename_page(project)
    status, out, _ = po_i18n_command(project, "check", "--lang", LANGUAGE, capsys=capsys)
    assert status == 1
    assert [l for l in out if l.startswith("i18n/ru/ddp-basics.po")] == [ORPHAN_LINE]


def test_update_offers_the_translations_of_a_renamed_pages_catalog(project, capsys):
    orphan, old, new = _rename_page(project)
    before = orphan.read_bytes()
    status, out, err = po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)
    assert (status, err) == (0, [])
    translated = {e.msgid: e.msgstr for e in polib.pofile(str(orphan)) if e.translated()}
    renamed = polib.pofile(str(project.catalog_path(LANGUAGE, "ddp.md")))
    exact = {e.msgid: e.msgstr for e in renamed if e.translated()}
    assert exact == {m: s for m, s in translated.items() if not m.startswith(old)}  # not fuzzy
    [fuzzy] = renamed.fuzzy_entries()  # the edited paragraph: a close match
    assert fuzzy.msgid.startswith(new) and fuzzy.previous_msgid.startswith(old) and fuzzy.msgstr == translated[fuzzy.previous_msgid]
    assert not [e for e in renamed if not e.msgstr]
    assert orphan.read_bytes() == before  # read, never written or deleted
    assert any(l.startswith("i18n/ru/ddp-basics.po: belongs to no English page") for l in out), out


def test_gnu_msgmerge_compendium_offers_the_same_exact_translations(project, capsys):
    msgmerge = _tool("msgmerge")
    orphan, _, _ = _rename_page(project)
    template = project.root / "ddp.pot"
    pot = polib.POFile(wrapwidth=po.WRAP_WIDTH)
    pot.metadata = {"Content-Type": "text/plain; charset=UTF-8"}
    for msgid in dict.fromkeys(m.msgid for m in page_messages(project, Path("ddp.md"))):
        pot.append(polib.POEntry(msgid=msgid, msgstr=""))
    pot.save(str(template))
    gnu = project.root / "gnu.po"
    proc = subprocess.run([msgmerge, "--quiet", "--compendium", str(orphan), "-o", str(gnu), os.devnull, str(template)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    po_i18n_command(project, "update", "--lang", LANGUAGE, capsys=capsys)

    def exact(path: Path) -> dict[str, str]:
        return {e.msgid: e.msgstr for e in polib.pofile(str(path)) if e.translated()}

    assert exact(project.catalog_path(LANGUAGE, "ddp.md")) == exact(gnu)
