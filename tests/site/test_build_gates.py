"""What a build does with outdated, unsafe and broken translations and with unverified code.

Each test builds a scratch copy of the project with one planted change.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import polib
import pytest
from bs4 import BeautifulSoup

from conftest import LANGUAGES, copy_project
from site_server import MKDOCS, MKDOCS_ENV, shared_build

pytestmark = pytest.mark.site


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(tmp_path)


def build(project: Path, strict: bool) -> subprocess.CompletedProcess:
    return subprocess.run([*MKDOCS, "build", "--strict" if strict else "--no-strict"],
                          cwd=project, capture_output=True, text=True, env=MKDOCS_ENV)


def html(project: Path, language: str, page: str, site: Path | None = None) -> BeautifulSoup:
    """A page of the site built in ``project`` (or of the built ``site`` folder given)."""
    site = site or project / "site"
    base = site if language == "en" else site / language
    return BeautifulSoup((base / page / "index.html").read_text(encoding="utf-8"), "html.parser")


def _entry(catalog: polib.POFile, startswith: str) -> polib.POEntry:
    return next(e for e in catalog if e.msgid.startswith(startswith))


def test_a_fuzzy_message_shows_in_english_with_a_notice_and_counts_on_the_status_page(project):
    path = project / "i18n" / "ru" / "ddp-basics.po"
    catalog = polib.pofile(str(path))
    entry = _entry(catalog, "The batch size you give")
    entry.flags.append("fuzzy")
    catalog.save(str(path))
    proc = build(project, strict=False)
    assert proc.returncode == 0, proc.stderr
    page = html(project, "ru", "ddp-basics")
    notice = page.select_one("article p.course-notice")
    assert notice is not None
    assert re.search(r"\d+\s?%", notice.get_text())
    assert notice.a["href"] == "../../ddp-basics/"
    assert "unrecognized relative link" not in proc.stderr  # the notice's link is not reported as a broken one
    assert "The batch size you give the" in page.get_text()
    assert html(project, "ja", "ddp-basics").select_one("p.course-notice") is None  # fully translated
    status = html(project, "ru", "translation-status")
    row = next(tr for tr in status.select("tbody tr") if tr.a and tr.a["href"].startswith("../ddp-basics"))
    assert [td.get_text() for td in row.select("td")][2:] == ["1", "0"]


def test_an_unsafe_translation_falls_back_to_english_and_fails_the_strict_build(project):
    path = project / "i18n" / "tr" / "ddp-basics.po"
    catalog = polib.pofile(str(path))
    entry = _entry(catalog, "The batch size you give")
    entry.msgstr = entry.msgstr + ' <script>alert(1)</script> <img src=x onerror="alert(2)">'
    catalog.save(str(path))
    line = _msgstr_line(path, entry.msgid)
    loose = build(project, strict=False)
    assert re.search(rf"^WARNING .*i18n/tr/ddp-basics\.po:{line}: adds raw HTML <img> with onerror src; "
                     r"adds raw HTML <script>; the English is shown instead: keep the msgid's code, links, markup and "
                     r"placeholders as they are and add none \(see i18n/README\.md\)$",
                     loose.stderr, re.M), loose.stderr  # one line per refused translation, its remedy at the end
    page = html(project, "tr", "ddp-basics")
    assert page.find("script", string=re.compile("alert")) is None
    assert page.find("img", src="x") is None
    assert "The batch size you give the" in page.get_text()
    assert build(project, strict=True).returncode != 0


def test_a_catalog_with_a_syntax_error_stops_the_build_in_one_line(project):
    path = project / "i18n" / "sv" / "index.po"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(i for i, l in enumerate(lines) if l.startswith("msgstr \"") and len(l) > 12)
    lines[number] = lines[number].rstrip("\n").rstrip('"') + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    proc = build(project, strict=False)
    assert proc.returncode != 0
    # named relative to the project, before any page is read (not "Error reading page ...")
    assert re.search(rf"^(ERROR +- +)?i18n/sv/index\.po:{number + 1}: unterminated string", proc.stderr, re.M), proc.stderr
    assert "Error reading page" not in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def _msgstr_line(path: Path, msgid: str) -> int:
    """The line of the msgstr keyword of the entry with this msgid."""
    entry = next(e for e in polib.pofile(str(path)) if e.msgid == msgid)
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i in range(entry.linenum - 1, len(lines)) if lines[i].startswith("msgstr")) + 1


def test_a_broken_placeholder_in_an_interface_string_fails_the_strict_build(project):
    path = project / "i18n" / "ru" / "_course.po"
    catalog = polib.pofile(str(path))
    entry = next(e for e in catalog if "%(device)s" in e.msgid and not e.msgid_plural and not e.obsolete)
    entry.msgstr = entry.msgstr.replace("%(device)s", "%(devise)s")
    catalog.save(str(path))
    line = _msgstr_line(path, entry.msgid)
    loose = build(project, strict=False)
    assert loose.returncode == 0, loose.stderr
    assert re.search(rf"WARNING .*i18n/ru/_course\.po:{line}: placeholder %\(devise\)s is not in the msgid", loose.stderr), loose.stderr
    assert build(project, strict=True).returncode != 0


def test_an_untranslated_site_string_fails_the_strict_build_naming_file_and_line(project):
    """``_site.po`` follows the pages' strictness: an emptied "Permanent link" (the ¶
    tooltip) shows in English, and ``mkdocs build --strict`` fails at its line, as
    ``po-i18n check`` and i18n/README.md say."""
    path = project / "i18n" / "sv" / "_site.po"
    catalog = polib.pofile(str(path), wrapwidth=79)
    entry = _entry(catalog, "Permanent link")
    entry.msgstr = ""
    catalog.save(str(path))
    line = _msgstr_line(path, "Permanent link")  # the line to edit
    held = len([e for e in polib.pofile(str(path)) if e.msgid and not e.obsolete])
    proc = build(project, strict=True)
    assert proc.returncode != 0
    assert re.findall(r"^WARNING +- +(.*)$", proc.stderr, re.M) == [
        f"i18n/sv/_site.po:{line}: 1 of {held} site-wide messages are untranslated or fuzzy in 'sv' and are shown in "
        f"English; translate them in i18n/sv/_site.po, the first at line {line}"], proc.stderr


def test_one_strict_build_names_the_problems_of_every_language(project):
    path = project / "i18n" / "ja" / "ddp-basics.po"
    text = path.read_text(encoding="utf-8")
    entry = _entry(polib.pofile(str(path)), "The batch size you give")
    text += f'\nmsgid "{polib.escape(entry.msgid)}"\nmsgstr "重複"\n'
    path.write_text(text, encoding="utf-8")
    sv = project / "i18n" / "sv" / "index.po"
    catalog = polib.pofile(str(sv))
    next(e for e in catalog if e.msgid and not e.obsolete).flags.append("fuzzy")
    catalog.save(str(sv))
    lesson = project / "docs" / "torchrun-launching.md"  # English edited, no po-i18n update since
    lesson.write_text(lesson.read_text(encoding="utf-8") + "\nA sentence no catalog holds yet.\n", encoding="utf-8")
    strict = build(project, strict=True)
    assert strict.returncode != 0
    assert re.search(r"WARNING .*i18n/ja/ddp-basics\.po:\d+: duplicate msgid", strict.stderr), strict.stderr
    fuzzy = next(e for e in polib.pofile(str(sv)) if "fuzzy" in e.flags)
    msgstr = _msgstr_line(sv, fuzzy.msgid)  # the line to edit, not the entry's first comment
    assert re.search(r"WARNING .*index\.md: 1 of \d+ messages are untranslated or fuzzy in 'sv' and are shown in English; "
                     rf"translate them in i18n/sv/index\.po, the first at line {msgstr}; a fuzzy one is used once you "
                     r"have checked its msgstr and deleted its '#, fuzzy' line$", strict.stderr, re.M), strict.stderr
    assert re.search(r"WARNING .*torchrun-launching\.md: 1 of \d+ messages are untranslated or fuzzy in 'tr' and are shown "
                     r"in English; add the new ones with: po-i18n update --lang tr, then translate them in "
                     r"i18n/tr/torchrun-launching\.po$", strict.stderr, re.M), strict.stderr


def test_badges_in_every_language_and_a_one_byte_edit_takes_them_from_its_blocks(project, tmp_path_factory):
    verified = shared_build(tmp_path_factory)[0]  # the strict build of the unchanged project
    for language in LANGUAGES:
        page = html(project, language, "ddp-basics", verified)
        blocks = [b for b in page.select("article div.highlight")  # the verified output is not code
                  if not b.find_parent("details", class_="course-output")]
        badges = page.select("article a.course-badge")
        assert len(blocks) == len(badges) > 0, language
        assert all("course-badge--verified" in b["class"] for b in badges)
        assert all(b["href"] == "../verification/" for b in badges)
        assert all("2" in b.get_text() and "torch 2.13.0" in b.get_text() for b in badges)
    ru_badge = html(project, "ru", "ddp-basics", verified).select_one("a.course-badge").get_text()
    assert ru_badge != html(project, "en", "ddp-basics", verified).select_one("a.course-badge").get_text()

    program = project / "snippets" / "ddp_basics" / "train.py"
    # a strict build refuses the change (test_a_changed_program_fails_every_strict_build_quiet_or_not)
    program.write_bytes(program.read_bytes() + b"\n")
    build(project, strict=False)
    # the page shows several programs: exactly the blocks cut from train.py lose their badge
    from_train = (project / "docs" / "ddp-basics.md").read_text(encoding="utf-8").count('--8<-- "ddp_basics/train.py:')
    for language in LANGUAGES:
        badges = html(project, language, "ddp-basics").select("article a.course-badge")
        unverified = [b for b in badges if "course-badge--unverified" in b["class"]]
        assert len(unverified) == from_train > 0 and len(badges) > from_train, language


UNVERIFIED = ("ddp-basics.md: snippet 'snippets/ddp_basics/train.py' changed since its last passing run; "
              "run: .venv/bin/python -m pytest tests/snippets/test_ddp_basics/test_train.py")


@pytest.mark.parametrize("flags", [("--strict",), ("-q", "--strict"), ("--strict", "--quiet")], ids=" ".join)
def test_a_changed_program_fails_every_strict_build_quiet_or_not(project, flags):
    program = project / "snippets" / "ddp_basics" / "train.py"
    program.write_bytes(program.read_bytes() + b"\n")
    proc = subprocess.run([*MKDOCS, "build", *flags], cwd=project, capture_output=True, text=True, env=MKDOCS_ENV)
    assert proc.returncode != 0
    assert UNVERIFIED in proc.stderr  # a quiet build still says why it refused


def test_gh_deploy_strict_refuses_a_changed_program_before_pushing(project, tmp_path):
    remote = tmp_path / "remote.git"
    git = lambda *args, cwd=project: subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    git("init", "--bare", "-q", str(remote), cwd=tmp_path)
    git("init", "-q")
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "--allow-empty", "-m", "start")
    git("remote", "add", "origin", str(remote))
    program = project / "snippets" / "ddp_basics" / "train.py"
    program.write_bytes(program.read_bytes() + b"\n")
    proc = subprocess.run([*MKDOCS, "gh-deploy", "--strict", "-q", "--force"], cwd=project, capture_output=True,
                          text=True, env={**MKDOCS_ENV, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                                          "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})
    assert proc.returncode != 0
    assert UNVERIFIED in proc.stderr
    branches = subprocess.run(["git", "branch", "--list"], cwd=remote, capture_output=True, text=True).stdout
    assert "gh-pages" not in branches  # nothing was published


def test_a_changed_program_shows_no_output_from_its_old_record(project, tmp_path_factory):
    before = html(project, "ru", "ddp-basics", shared_build(tmp_path_factory)[0]).select("article details.course-output")
    assert sum("epoch 2: loss" in b.get_text() for b in before) == 1  # train.py's output, among the page's others
    program = project / "snippets" / "ddp_basics" / "train.py"
    # a strict build refuses the change (test_a_changed_program_fails_every_strict_build_quiet_or_not)
    program.write_bytes(program.read_bytes() + b"\n")
    build(project, strict=False)
    for language in LANGUAGES:
        after = html(project, language, "ddp-basics").select("article details.course-output")
        assert len(after) == len(before) - 1 and not any("epoch 2: loss" in b.get_text() for b in after), language


def test_english_first_publishes_a_new_paragraph_under_the_notice_and_still_refuses_an_unsafe_translation(project):
    """mkdocs.yml's ``untranslated: !ENV [PO_I18N_UNTRANSLATED, fail]``: by default a new
    English paragraph that no catalog translates fails the strict build; with
    PO_I18N_UNTRANSLATED=warn the page is published, the paragraph in English under the
    notice; an unsafe translation fails either way."""
    page = project / "docs" / "ddp-basics.md"
    text = page.read_text(encoding="utf-8")
    new = "A sentence the translators have not seen yet."
    page.write_text(text.replace("\n## Recap", f"\n{new}\n\n## Recap", 1), encoding="utf-8")

    refused = build(project, strict=True)
    assert refused.returncode == 1
    assert re.search(r"WARNING .*ddp-basics\.md.*untranslated", refused.stderr), refused.stderr[-2000:]

    english_first = subprocess.run([*MKDOCS, "build", "--strict"], cwd=project, capture_output=True, text=True,
                                   env={**MKDOCS_ENV, "PO_I18N_UNTRANSLATED": "warn"})
    assert english_first.returncode == 0, english_first.stderr[-2000:]
    for language in ("ru", "ja"):
        shown = html(project, language, "ddp-basics")
        assert shown.select_one("article p.course-notice") is not None
        assert new in shown.get_text()

    path = project / "i18n" / "ja" / "ddp-basics.po"
    catalog = polib.pofile(str(path))
    entry = next(e for e in catalog if e.msgstr and not e.fuzzy and "`" not in e.msgid and e.msgid[0].isalpha())
    entry.msgstr += " [here](https://example.com/)"  # a link the English does not have
    catalog.save(str(path))
    unsafe = subprocess.run([*MKDOCS, "build", "--strict"], cwd=project, capture_output=True, text=True,
                            env={**MKDOCS_ENV, "PO_I18N_UNTRANSLATED": "warn"})
    assert unsafe.returncode == 1
    assert re.search(r"WARNING .*ja/ddp-basics\.po:\d+:.*link", unsafe.stderr), unsafe.stderr[-2000:]


def test_a_program_shown_without_its_command_fails_the_strict_build_naming_it(project):
    """Issue 33: a page shows accumulate.py's sections but no page includes its launch
    section, so a reader cannot see how to run it: the strict build names the program, the
    page and the include to add, once (not once per language)."""
    page = project / "docs" / "ddp-basics.md"
    text = page.read_text(encoding="utf-8")
    block = '``` bash\n--8<-- "ddp_basics/accumulate.py:launch"\n```\n\n'
    assert text.count(block) == 1
    page.write_text(text.replace(block, ""), encoding="utf-8")
    strict = build(project, strict=True)
    assert strict.returncode != 0
    assert re.findall(r"^WARNING +- +(.*)$", strict.stderr, re.M) == [
        "ddp-basics.md: program 'snippets/ddp_basics/accumulate.py' is shown without its command: no page includes "
        'its launch section; add a block with --8<-- "ddp_basics/accumulate.py:launch" to ddp-basics.md'], strict.stderr
