"""Catalog workflow: update merges like msgmerge, check reports bad catalogs in one line each."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest

from conftest import ROOT, copy_project
from po_i18n import catalog as po
from po_i18n import cli
from po_i18n.check import format_problems
from po_i18n.extract import update
from po_i18n.project import Project

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
    assert report.written == [], "run: po-i18n update (and translate what it marks)"


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
    new = next(lang for lang in ("de", "nl", "da", "fi", "hu") if lang not in project.languages)  # two plural forms
    config = project.root / "mkdocs.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "        - locale: sv\n", f"        - locale: {new}\n          name: New\n          build: true\n        - locale: sv\n"),
        encoding="utf-8")
    assert cli.main(["--config", str(config), "update", "--lang", new]) == 0
    catalog = polib.pofile(str(project.i18n_dir / new / "ddp-basics.po"))
    assert catalog.metadata["Language"] == new
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
    target = project.interface_catalog_path("ru", "course")  # the samples hold course strings
    shutil.copy(DATA / name, target)
    status = cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "ru"])
    out = capsys.readouterr()
    line, phrase = BAD[name]
    problems = [l for l in out.out.splitlines() if l.startswith("i18n/ru/_course.po:")]
    assert status == 1
    assert any(l.startswith(f"i18n/ru/_course.po:{line}: ") and phrase in l for l in problems), out.out
    assert "Traceback" not in out.out + out.err


def test_the_valid_sample_passes_check(project, capsys):
    shutil.copy(DATA / "valid.po", project.interface_catalog_path("ru", "course"))
    cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "ru"])
    # problems only: the sample holds two of the course's strings, the others are listed as shown in English
    assert not [l for l in capsys.readouterr().out.splitlines()
                if l.startswith("i18n/ru/_course.po:") and "are shown in English" not in l]


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
    assert "usage: po-i18n" in capsys.readouterr().out


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
    # valid, but the strict build refuses a fuzzy message (untranslated: fail): so does check
    assert cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "sv"]) == 1
    out = capsys.readouterr().out
    assert "all catalogs are valid" in out
    assert "i18n/sv/ddp-basics.po (1 fuzzy, 0 untranslated)" in out
    assert any(line.startswith("ddp-basics.md: 1 of ") and "in 'sv' and are shown in English" in line
               for line in out.splitlines()), out


# --- Catalog files and headers that are damaged or hostile (issue 34) -----------------

TOKEN = "TOKEN-5e1d"  # planted in each damaged file: no message may show it


def _site(project: Project) -> Path:
    return project.site_catalog_path("ru")


def _refusal(path: Path) -> str:
    """The one line :func:`po_i18n.catalog.load` refuses ``path`` with."""
    with pytest.raises(po.CatalogError) as caught:
        po.load(path)
    return str(caught.value)


def _link_to_outside(project: Project, tmp_path: Path) -> Path:
    """``i18n/ru/_site.po`` made a link to a valid catalog outside the project whose
    translations are :data:`TOKEN`."""
    outside = tmp_path / "outside"
    outside.mkdir(exist_ok=True)
    secret = outside / "secret.po"
    secret.write_text(re.sub(r'(?m)^msgstr "(.+)"$', f'msgstr "{TOKEN}"', _site(project).read_text(encoding="utf-8")),
                      encoding="utf-8")
    _site(project).unlink()
    _site(project).symlink_to(secret)
    return secret


def test_a_catalog_that_is_a_link_outside_is_neither_read_nor_written(project, tmp_path, capsys):
    secret = _link_to_outside(project, tmp_path)
    before = secret.read_bytes()
    assert _refusal(_site(project)).endswith(
        "_site.po: is a symbolic link, and catalogs are read and written only as real files and folders inside i18n/; "
        "replace the link with a copy of what it points to")
    config = str(project.root / "mkdocs.yml")
    assert cli.main(["--config", config, "update", "--lang", "ru"]) == 2
    assert cli.main(["--config", config, "check", "--lang", "ru"]) == 1
    out = capsys.readouterr()
    assert secret.read_bytes() == before and _site(project).is_symlink()
    assert TOKEN not in out.out + out.err and str(tmp_path / "outside") not in out.out + out.err


def test_a_link_inside_i18n_is_refused_too(project):
    real = _site(project).with_name("site-real.txt")
    _site(project).rename(real)
    _site(project).symlink_to(real.name)
    assert "is a symbolic link" in _refusal(_site(project))


def test_update_never_creates_the_target_of_a_dangling_link(project, tmp_path, capsys):
    target = tmp_path / "outside" / "created.po"
    page = project.catalog_path("ru", "ddp-basics.md")
    page.unlink()
    page.symlink_to(target)
    assert cli.main(["--config", str(project.root / "mkdocs.yml"), "update", "--lang", "ru"]) == 2
    assert not target.exists() and not target.parent.exists()
    assert capsys.readouterr().err.strip().endswith("i18n/ru/ddp-basics.po: is a symbolic link, and catalogs are read and "
                                                    "written only as real files and folders inside i18n/; replace the link "
                                                    "with a copy of what it points to")


def test_a_linked_folder_is_refused_in_reading_and_writing(project, tmp_path, monkeypatch):
    monkeypatch.chdir(project.root)  # messages name files relative to the working directory
    outside = tmp_path / "outside-ru"
    shutil.copytree(project.i18n_dir / "ru", outside)
    shutil.rmtree(project.i18n_dir / "ru")
    (project.i18n_dir / "ru").symlink_to(outside, target_is_directory=True)
    before = {p: p.read_bytes() for p in outside.iterdir()}
    reason = "its folder i18n/ru is a symbolic link, and catalogs are read and written only as real files and folders"
    assert reason in _refusal(_site(project))
    with pytest.raises(po.CatalogError, match="i18n/ru: is a symbolic link"):
        project.catalog_files("ru")
    with pytest.raises(po.CatalogError, match=re.escape(reason)):
        po.save(polib.POFile(), _site(project))
    with pytest.raises(po.CatalogError, match="i18n/ru:? is a symbolic link"):  # listing the folder's catalogs refuses it first
        update(project, ("ru",))
    assert {p: p.read_bytes() for p in outside.iterdir()} == before


@pytest.mark.parametrize("kind", ["directory", "named pipe", "loop"])
def test_what_is_not_a_regular_file_is_refused_without_waiting(project, kind):
    path = _site(project)
    path.unlink()
    if kind == "directory":
        path.mkdir()
        expected = "is a directory, not a catalog file"
    elif kind == "named pipe":
        os.mkfifo(path)  # opening it to read would wait for a writer forever
        expected = "is not a regular file (a named pipe, socket or device)"
    else:
        path.symlink_to(path.name)
        expected = "is a symbolic link"
    assert expected in _refusal(path)
    assert path in project.catalog_files("ru")  # listed, so that po-i18n check reports it
    with pytest.raises(po.CatalogError, match=re.escape(expected)):
        po.save(polib.POFile(), path)


def test_an_unreadable_catalog_is_one_line(project):
    """Read by a process that permissions stop: as root, one without CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH (``setpriv``), since chmod 000 stops no read by root."""
    _site(project).chmod(0)
    wrap = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("Requires: [not root, or util-linux setpriv] (chmod 000 stops no read by root)")
        wrap = [setpriv, "--bounding-set", "-dac_override,-dac_read_search"]
    code = ("import pathlib, sys\nfrom po_i18n import catalog\n"
            "try:\n    catalog.load(pathlib.Path(sys.argv[1]))\nexcept catalog.CatalogError as exc:\n    print(exc)")
    proc = subprocess.run([*wrap, sys.executable, "-c", code, "i18n/ru/_site.po"], cwd=project.root,
                          capture_output=True, text=True)
    assert (proc.stdout, proc.stderr) == ("i18n/ru/_site.po: cannot be read (permission denied); give your user read "
                                          "permission to it and its folder\n", "")


def test_a_catalog_larger_than_any_page_needs_is_refused_unread(project):
    from po_i18n.catalog_file import MAX_BYTES

    with _site(project).open("ab") as f:
        f.truncate(MAX_BYTES + 1)
    assert "is 16.0 MB, more than the 16 MB a catalog may have" in _refusal(_site(project))


def test_save_replaces_the_file_in_one_step_and_keeps_its_permissions(project):
    path = _site(project)
    path.chmod(0o640)
    catalog = po.load(path)
    catalog[0].tcomment = "a note"
    assert po.save(catalog, path)
    assert path.stat().st_mode & 0o777 == 0o640
    assert "# a note\n" in path.read_text(encoding="utf-8")
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temporary file left


@pytest.mark.parametrize("content, line, reason", [
    ("\ufeff", 1, "starts with a UTF-8 byte order mark, which GNU msgfmt refuses; save the catalog as UTF-8 without BOM"),
    (f"\ufeff# {TOKEN}\n" + (DATA / "valid.po").read_text(encoding="utf-8"), 1, "starts with a UTF-8 byte order mark"),
    (f"{TOKEN}=hunter2\n", 1, "a line that is not a comment (#), a keyword (msgid, msgstr…) with a quoted string, or a "
                              "quoted string; is a # or a quote missing, or is this not a catalog?"),
    (f'msgid "a"\nmsgstr {TOKEN}\n', 2, "msgstr is not followed by one quoted string; write it as msgstr \"text\""),
    (f'msgid "a"\nmsgstr "b\x00{TOKEN}"\n', 2, "has the control character U+0000, which a catalog's text cannot hold"),
    (f'msgid "a"\nmsgstr "\x1b]0;{TOKEN}\x07"\n', 2, "has the control character U+001B"),
    (f'msgid "a"\nmsgstr "b\u2028{TOKEN}"\n', 2, "has the control character U+2028"),
    (f'msgid "a"\r{TOKEN}\n', 1, "has the control character U+000D"),
    (f'msgstr "{TOKEN}"\nmsgid "a"\n', 1, "an entry out of order"),
    (f'#| {TOKEN}\nmsgid "a"\nmsgstr "b"\n', 1, "a line that is not a comment (#)"),
])
def test_a_file_that_is_no_catalog_is_named_never_quoted(tmp_path, content, line, reason):
    path = tmp_path / "i18n" / "ru" / "_site.po"
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8", newline="")
    message = _refusal(path)
    assert TOKEN not in message and str(tmp_path) not in message.split(": ", 1)[1]
    assert re.search(rf"_site\.po:{line}: ", message) and reason in message, message


def test_a_latin1_catalog_is_told_how_to_convert(tmp_path):
    path = tmp_path / "_site.po"
    text = (DATA / "valid.po").read_text(encoding="utf-8").replace("charset=UTF-8", "charset=ISO-8859-1")
    path.write_bytes(text.replace("Проверено", f"Vérifié {TOKEN}").encode("latin-1", "replace"))
    message = _refusal(path)
    assert message.endswith(":11: not valid UTF-8; convert it with: msgconv --to-code=UTF-8") and TOKEN not in message


@pytest.mark.parametrize("language", ["ru", "ja", "tr", "sv", "fr", "ar", "cy", "pl"])
def test_every_plural_rule_babel_writes_passes(language):
    from babel.messages.plurals import get_plural

    from po_i18n.catalog_header import SAMPLE_N, plural_rule

    expected = get_plural(language)
    rule = plural_rule(expected.plural_forms)
    assert rule.nplurals == expected.num_plurals
    assert {rule.plural(n) for n in SAMPLE_N} == set(range(expected.num_plurals))


@pytest.mark.parametrize("forms, reason", [
    ("nplurals=3;", "is not of the form 'nplurals=N; plural=EXPRESSION;'"),
    (f"plural={TOKEN}; nplurals=3;", "is not of the form 'nplurals=N; plural=EXPRESSION;'"),
    ("nplurals=0; plural=0;", "must have nplurals from 1 to 6"),
    (f"nplurals={'9' * 5000}; plural=0;", "must have nplurals from 1 to 6"),
    ("nplurals=3; plural=n/0;", "has a plural expression that divides by zero for n = 0"),
    ("nplurals=3; plural=n%(n-5) ? 1 : 2;", "has a plural expression that divides by zero for n = 5"),
    ("nplurals=3; plural=n%(n-100000) ? 1 : 2;", "has a plural expression that divides by zero for n = 100000"),
    (f"nplurals=3; plural=n > {TOKEN};", "has a plural expression that Python's gettext cannot compile (a token that "
                                         "is not part of C's plural expressions)"),
    ("nplurals=3; plural=(n;", "cannot compile (unbalanced parenthesis in plural form)"),
    ("nplurals=3; plural=" + "(" * 30 + "n" + ")" * 30 + ";", "cannot compile (plural form expression is too complex)"),
    ("nplurals=3; plural=;", "cannot compile (unexpected end of plural form)"),
    ("nplurals=3; plural=n;", "gives form 3 for n = 3, but forms are 0 to 2 (nplurals=3)"),
    ("nplurals=2; plural=n-1;", "gives form -1 for n = 0"),
    ("nplurals=2; plural=n > 4294967296 ? 2 : 1;", "gives form 2 for n = 9999999999"),
])
def test_a_plural_rule_the_build_cannot_use_is_named_without_quoting_it(forms, reason):
    from po_i18n.catalog_header import HeaderError, plural_rule

    with pytest.raises(HeaderError) as caught:
        plural_rule(forms)
    assert str(caught.value).startswith(reason) or reason in str(caught.value), str(caught.value)
    assert TOKEN not in str(caught.value)


def _header(field: str, value: str | None) -> str:
    """valid.po with one header field changed (``None``: removed)."""
    text = (DATA / "valid.po").read_text(encoding="utf-8")
    line = next(l for l in text.splitlines(keepends=True) if l.startswith(f'"{field}:'))
    return text.replace(line, "" if value is None else f'"{field}: {value}\\n"\n')


HEADERS = {
    "no Language": (_header("Language", None), 2, 'header Language is missing; write: "Language: ru\\n"'),
    "wrong Language": (_header("Language", TOKEN), 4,
                       "header Language is not 'ru', the language of the folder it is in; write: \"Language: ru\\n\""),
    "no Content-Type": (_header("Content-Type", None), 2,
                        'header Content-Type is missing; write: "Content-Type: text/plain; charset=UTF-8\\n"'),
    "no charset": (_header("Content-Type", "text/plain"), 6, "header Content-Type names no charset; write:"),
    "unknown charset": (_header("Content-Type", f"text/plain; charset={TOKEN}"), 6,
                        "header Content-Type names a charset that Python does not know; write:"),
    "latin-1 charset": (_header("Content-Type", "text/plain; charset=ISO-8859-1"), 6,
                        "header Content-Type names a charset other than UTF-8, and catalogs here are read as UTF-8 "
                        "(convert one that is not with: msgconv --to-code=UTF-8); write:"),
    "no Plural-Forms": (_header("Plural-Forms", None), 2, 'header Plural-Forms is missing; write: "Plural-Forms: nplurals=3;'),
    "division by zero": (_header("Plural-Forms", "nplurals=3; plural=n/0;"), 8,
                         "header Plural-Forms has a plural expression that divides by zero for n = 0; write: "
                         "\"Plural-Forms: nplurals=3; plural=n % 10 == 1"),
    "nplurals of another language": (_header("Plural-Forms", "nplurals=2; plural=(n != 1);"), 8,
                                     "header Plural-Forms says nplurals=2, but 'ru' has 3 plural forms (CLDR, through Babel)"),
    "duplicate header": ((DATA / "valid.po").read_text(encoding="utf-8").replace(
        '\nmsgid "Verified"', f'\nmsgid ""\nmsgstr ""\n"X-Note: {TOKEN}\\n"\n\nmsgid "Verified"', 1), 10,
        'a second header entry (msgid ""); a catalog has one: merge the two and delete this one'),
    "only obsolete entries": (f'# {TOKEN}\n#~ msgid "Verified"\n#~ msgstr "Проверено"\n', 1, 'missing header entry (msgid "")'),
    "empty file": ("", 1, 'missing header entry (msgid ""); restore it with: po-i18n update --lang ru'),
}


@pytest.mark.parametrize("name", sorted(HEADERS))
def test_course_check_checks_the_header_as_the_build_uses_it(project, name, capsys):
    text, line, reason = HEADERS[name]
    _site(project).write_text(text, encoding="utf-8")
    status = cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "ru"])
    out = capsys.readouterr()
    assert status == 1 and "Traceback" not in out.out + out.err and TOKEN not in out.out + out.err
    assert any(l.startswith(f"i18n/ru/_site.po:{line}: {reason}") for l in out.out.splitlines()), out.out


def test_msgstr_forms_beyond_nplurals_are_a_problem_and_show_in_english(project, capsys):
    from coursekit.course_strings import PROCESSES
    from po_i18n.interface import Interface

    text = (DATA / "valid.po").read_text(encoding="utf-8").replace('msgstr[2] "%(count)d процессов"',
                                                                      'msgstr[5] "%(count)d процессов"')
    _site(project).write_text(text, encoding="utf-8")
    assert cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "ru"]) == 1
    assert ("i18n/ru/_site.po:13: plural forms numbered other than msgstr[0] to msgstr[2], the forms of 'ru'; "
            "number them 0 to 2") in capsys.readouterr().out.splitlines()
    ui = Interface(po.load(_site(project)))
    assert [ui.text(PROCESSES, count=n) for n in (1, 2, 5)] == ["1 process", "2 processes", "5 processes"]


@pytest.mark.parametrize("name", ["no charset", "unknown charset", "no Plural-Forms", "division by zero", "duplicate header"])
def test_the_interface_never_fails_on_a_bad_header(tmp_path, name):
    """What the build does with such a header: the text is read as UTF-8 whatever the
    charset says; plural strings are in English unless the plural rule passes (course
    check and the build's warnings say why); no exception."""
    from coursekit.course_strings import PROCESSES, VERIFIED
    from po_i18n.interface import Interface

    path = tmp_path / "_site.po"
    path.write_text(HEADERS[name][0], encoding="utf-8")
    ui = Interface(po.load(path))
    assert ui.text(VERIFIED) == "Проверено"
    plurals = ["0 процессов", "1 процесс", "2 процесса"] if "charset" in name else ["0 processes", "1 process", "2 processes"]
    assert [ui.text(PROCESSES, count=n) for n in (0, 1, 2)] == plurals


def test_the_interface_uses_a_plural_rule_that_passes(tmp_path):
    from coursekit.course_strings import PROCESSES
    from po_i18n.interface import Interface

    path = tmp_path / "_site.po"
    path.write_text((DATA / "valid.po").read_text(encoding="utf-8"), encoding="utf-8")
    ui = Interface(po.load(path))
    assert [ui.text(PROCESSES, count=n) for n in (1, 2, 5, 21)] == ["1 процесс", "2 процесса", "5 процессов", "21 процесс"]


def test_a_reader_that_closes_the_pipe_gets_no_traceback():
    """``po-i18n stats | head -1``: the reader may close the pipe before the command has
    written everything; the command stops quietly (no traceback, which would also print
    the paths of the installed packages)."""
    course = Path(sys.executable).with_name("course")
    proc = subprocess.Popen([str(course), "--config", str(ROOT / "mkdocs.yml"), "stats"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.close()  # closed before the first line is written
    _, err = proc.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err.decode()


# --- a msgid that is no longer in the English: changed in English, or edited by hand ---------

_CHANGED = "One process per device"  # a heading of ddp-basics.md


def _age(path: Path, seconds: int) -> None:
    """Set a file's modification time ``seconds`` before now."""
    when = path.stat().st_mtime - seconds
    os.utime(path, (when, when))


def test_a_paragraph_changed_in_english_says_so_and_where_its_fuzzy_translation_will_be(project):
    """The English edit that ``mkdocs serve`` shows a translator: nobody edited the catalog;
    the message says to run po-i18n update and names the line of the fuzzy entry it writes.
    The other languages' catalogs, written by one po-i18n update, are the record that the
    old msgid was English, even when the page is not the newest file."""
    from po_i18n.check import check_catalog

    page = project.docs_dir / "ddp-basics.md"
    source = page.read_text(encoding="utf-8")
    assert _CHANGED in source
    page.write_text(source.replace(_CHANGED, "One process for each device"), encoding="utf-8")
    _age(page, 3600)  # older than the catalogs: only the other catalogs tell what happened
    path = project.catalog_path("sv", "ddp-basics.md")
    old = next(e for e in polib.pofile(str(path)) if _CHANGED in e.msgid)
    found = [p for p in check_catalog(project, path) if "English" in p]
    assert len(found) == 1
    match = re.fullmatch(r"i18n/sv/ddp-basics\.po:(\d+): msgid '(.*)' changed in English: run `po-i18n update`, then "
                         r"update the fuzzy translation at i18n/sv/ddp-basics\.po:(\d+)", found[0])
    assert match and int(match[1]) == old.linenum and old.msgid.startswith(match[2]), found
    update(project)
    fuzzy = next(e for e in polib.pofile(str(path)) if e.previous_msgid == old.msgid)
    assert fuzzy.fuzzy and fuzzy.linenum == int(match[3]) and fuzzy.msgstr == old.msgstr


def test_a_msgid_edited_by_hand_is_still_called_so(project):
    """A translator who changes a msgid (the English is as it was, and the other languages'
    catalogs hold the English msgid): the catalog is the newer file, and the message says
    it was edited by hand."""
    from po_i18n.check import check_catalog

    path = project.catalog_path("sv", "ddp-basics.md")
    old = next(e for e in polib.pofile(str(path)) if e.msgid.startswith("DistributedDataParallel (DDP) is the"))
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('"DistributedDataParallel (DDP) is the standard way',
                                 '"DistributedDataParallel (DDP) är standardsättet', 1), encoding="utf-8")
    _age(project.docs_dir / "ddp-basics.md", 3600)
    found = [p for p in check_catalog(project, path) if "English" in p]
    assert found == [f"i18n/sv/ddp-basics.po:{old.linenum}: msgid 'DistributedDataParallel (DDP) är standar' is "
                     "not in the English source (was it edited by hand?); restore it, and run: po-i18n update"], found


def test_a_page_saved_after_its_catalog_changed_in_english(project):
    """One language only (a site like the fixture site has no other catalogs to compare):
    the English saved after the catalog is the record that the English changed."""
    from po_i18n.check import check_catalog

    for language in set(project.languages) - {"sv"}:
        (project.i18n_dir / language / "ddp-basics.po").unlink()
    page = project.docs_dir / "ddp-basics.md"
    path = project.catalog_path("sv", "ddp-basics.md")
    page.write_text(page.read_text(encoding="utf-8").replace(_CHANGED, "One process for each device"),
                    encoding="utf-8")
    _age(path, 3600)
    found = [p for p in check_catalog(project, path) if "English" in p]
    assert len(found) == 1 and "changed in English: run `po-i18n update`, then update the fuzzy translation at " \
        "i18n/sv/ddp-basics.po:" in found[0], found
