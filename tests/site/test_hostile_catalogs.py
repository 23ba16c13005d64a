"""Hostile catalogs (issue 13): each planted translation is refused with one line naming
catalog and line, its English shows, nothing of it reaches the HTML, nothing crashes, and
the strict build fails; a deleted catalog is a state of its own.

All the hostile inputs are planted in one scratch copy of the project (each in its own
language and message), which is built twice: once loose, to read the pages, once strict.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import polib
import pytest
from bs4 import BeautifulSoup

from conftest import TRANSLATIONS, copy_project
from po_i18n import cli
from po_i18n.check import REFUSED_REMEDY

REMEDY = f"{REFUSED_REMEDY} (see i18n/README.md)"
from po_i18n.extract import update
from coursekit.course_strings import PROCESSES
from po_i18n.page_guard import TOGETHER
from po_i18n.project import Project
from site_server import MKDOCS, MKDOCS_ENV

pytestmark = pytest.mark.site

INCLUDE_MENTION = 'Write `--8<-- "file.py:name"` on its own line to include a section of a program.'
MENTION_RU = 'Пишите `--8<-- "file.py:name"` на отдельной строке, чтобы включить часть программы.'
STYLE = '{ style="position:fixed;top:0;left:0;width:100vw;height:100vh;background:red;z-index:9999" }'
# (language, include line added to the translation, text of what it would include)
INCLUDES = {
    "ru": ('--8<-- "ddp_basics/train.py:setup"', 'local_rank = int(os.environ["LOCAL_RANK"])'),
    "tr": ('--8<-- "../snippets/verification.json"', '"device_count"'),
    "sv": ('--8<-- "/etc/passwd"', "root:x:0:0"),
}
MISSING = ("sv", "torchrun-launching")
HAND_ADDED = "A sentence that no page has. " * 830
TOGETHER_PAGE = ("tr", "torchrun-launching.md")
# Issue 34: what keeps the structure but changes what the reader sees. A right-to-left
# override before a code span (Chromium shows the address reversed), and an ideographic
# space (a Japanese IME's) inside a command the reader copies.
PREDICT = "Before you run it in two terminals, predict:"
ADDRESS = "`127.0.0.1:29400`"
COMMAND = "`torchrun --nproc-per-node=2 default_port.py`"


@dataclass
class Built:
    root: Path
    lines: dict[str, int]  # what was planted -> the line of its msgstr
    loose: subprocess.CompletedProcess
    strict: subprocess.CompletedProcess

    def html(self, language: str, page: str) -> BeautifulSoup:
        base = self.root / "site" / ("" if language == "en" else language)
        path = base / "index.html" if page == "index" else base / page / "index.html"
        return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")

    def warning(self, path: str, line: int | None = None) -> str:
        """The one warning line of the loose build about ``path`` (at ``line``)."""
        where = re.escape(path) + (f":{line}: " if line else ": ")
        found = re.findall(rf"^WARNING +- +({where}.*)$", self.loose.stderr, re.M)
        assert len(found) == 1, (path, line, self.loose.stderr[-3000:])
        return found[0]

    def refusal(self, path: str, line: int) -> str:
        """The reasons of the refused translation at ``path:line``; asserts its warning ends with the remedy."""
        warning = self.warning(path, line)
        assert warning.endswith(f"; {REMEDY}"), warning
        return warning.removesuffix(f"; {REMEDY}")


def _set(path: Path, msgid: str, msgstr: str) -> int:
    """Give an entry a translation; the line of its msgstr keyword afterwards."""
    catalog = polib.pofile(str(path))
    entry = next(e for e in catalog if e.msgid == msgid)
    entry.msgstr = msgstr
    catalog.save(str(path))
    entry = next(e for e in polib.pofile(str(path)) if e.msgid == msgid)
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i in range(entry.linenum - 1, len(lines)) if lines[i].startswith("msgstr")) + 1


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    root = copy_project(tmp_path_factory.mktemp("hostile"))
    project = Project.load(root / "mkdocs.yml")
    page = project.docs_dir / "verification.md"
    page.write_text(page.read_text(encoding="utf-8") + f"\n{INCLUDE_MENTION}\n", encoding="utf-8")
    update(project)  # the new paragraph becomes a message in every catalog
    lines: dict[str, int] = {}

    index = project.catalog_path("ja", "index.md")
    entry = next(e for e in polib.pofile(str(index)) if e.msgid.startswith("[**Data vs model parallelism**]"))
    lines["attribute list"] = _set(index, entry.msgid, entry.msgstr.replace("**](", f"**{STYLE}](", 1))

    _set(project.catalog_path("ja", "verification.md"), INCLUDE_MENTION,
         '`--8<-- "file.py:name"` を 1 行に単独で書くと、プログラムの一部を取り込めます。')
    for language, (line, _) in INCLUDES.items():
        lines[f"include {language}"] = _set(project.catalog_path(language, "verification.md"), INCLUDE_MENTION,
                                            f"{MENTION_RU}\n{line}")

    lines["long"] = _set(project.catalog_path("ru", "index.md"), "How the code is checked", "Ж" * 20_000)

    # Each harmless alone (the message check accepts both), together they break the page:
    # after "&#", html.parser leaves Python-Markdown's offsets stale, and the end tags
    # that follow (the cell's, the English fallback spans') copy text from elsewhere.
    together = project.catalog_path(*TOGETHER_PAGE)
    cell = next(e for e in polib.pofile(str(together)) if e.msgid == "the job's rendezvous id")
    lines["together"] = _set(together, "What it holds", "&#")
    _set(together, cell.msgid, "</img>" + cell.msgstr)

    # A padded conversion spec in every plural form, its python-format flag removed
    site = project.interface_catalog_path("ru", "course")  # the badges' strings
    catalog = polib.pofile(str(site))
    entry = next(e for e in catalog if e.msgid == PROCESSES.msgid)
    entry.msgstr_plural = {i: "%(count)2000d процесс" for i in entry.msgstr_plural}
    entry.flags.remove("python-format")
    catalog.save(str(site))
    lines["padded"] = min(i for i, line in enumerate(site.read_text(encoding="utf-8").splitlines(), 1)
                          if "%(count)2000d" in line)

    # A hand-added entry no page has, 24,000 characters, whose msgstr is quadratic to render
    hand = project.catalog_path("sv", "ddp-basics.md")
    catalog = polib.pofile(str(hand))
    catalog.append(polib.POEntry(msgid=HAND_ADDED, msgstr="![" * 30_000))
    catalog.save(str(hand))
    lines["hand-added"] = next(e.linenum for e in polib.pofile(str(hand)) if e.msgid == HAND_ADDED)

    launching = project.catalog_path("ru", "torchrun-launching.md")
    entry = next(e for e in polib.pofile(str(launching)) if e.msgid.startswith(PREDICT))
    lines["right-to-left override"] = _set(launching, entry.msgid, entry.msgstr.replace(ADDRESS, f"\u202e{ADDRESS}", 1))
    launching = project.catalog_path("ja", "torchrun-launching.md")
    entry = next(e for e in polib.pofile(str(launching)) if COMMAND in e.msgid)
    lines["ideographic space"] = _set(launching, entry.msgid, entry.msgstr.replace("torchrun --", "torchrun\u3000--", 1))

    project.catalog_path(MISSING[0], f"{MISSING[1]}.md").unlink()
    run = lambda strict: subprocess.run([*MKDOCS, "build", "--strict" if strict else "--no-strict"],  # noqa: E731
                                        cwd=root, capture_output=True, text=True, env=MKDOCS_ENV)
    loose = run(False)
    assert loose.returncode == 0, loose.stderr
    return Built(root, lines, loose, run(True))


def test_nothing_crashes_and_the_strict_build_fails(built):
    for proc in (built.loose, built.strict):
        assert "Traceback" not in proc.stdout + proc.stderr
        assert "could not be found" not in proc.stderr  # pymdownx.snippets never sees a planted include line
    assert built.strict.returncode != 0
    # 13 planted refusals, and one untranslated paragraph (verification.md's new one) per
    # language added since (course add-language): the fixture translates it in ja, ru, tr, sv
    untranslated = [language for language in TRANSLATIONS if language not in {"ja", *INCLUDES}]
    assert f"Aborted with {13 + len(untranslated)} warnings in strict mode" in built.strict.stdout + built.strict.stderr


def test_an_attribute_list_without_a_colon_is_refused(built):
    assert built.refusal("i18n/ja/index.po", built.lines["attribute list"]).endswith(
        'changes the attributes of **bold**: adds style="position:fixed;top:0;left:0;width:100vw…"')
    page = built.html("ja", "index")
    assert page.select('[style*="position"]') == [] and "100vw" not in str(page)
    english = [s for s in page.select('article li span[lang="en"]') if s.get_text().startswith("Data vs model parallelism")]
    assert len(english) == 1
    assert english[0].strong is not None and english[0].strong.get("style") is None


@pytest.mark.parametrize("language", sorted(INCLUDES))
def test_an_include_line_next_to_a_mention_of_one_is_refused(built, language):
    line, included = INCLUDES[language]
    assert built.refusal(f"i18n/{language}/verification.po", built.lines[f"include {language}"]).endswith(
        f"line 2 starts with Markdown block syntax, an include line (--8<--): {line!r}; only lines the msgid has may be "
        "syntax; adds a line break")
    page = built.html(language, "verification")
    assert included not in str(page)
    english = [s for s in page.select('article span[lang="en"]') if s.get_text().startswith("Write")]
    assert len(english) == 1 and english[0].code.get_text() == '--8<-- "file.py:name"'
    assert "Пишите" not in page.get_text()
    ja = built.html("ja", "verification")  # a mention in a code span is no line of syntax: accepted
    assert "を 1 行に単独で書くと" in ja.get_text() and not [s for s in ja.select('span[lang="en"]') if "Write" in s.get_text()]


def test_a_translation_hundreds_of_times_longer_than_its_msgid_is_refused(built):
    assert built.refusal("i18n/ru/index.po", built.lines["long"]).endswith(
        "20000 characters, more than the 109 allowed for this 23-character msgid (3 x its length + 40); "
        "is something pasted by mistake?")
    page = built.html("ru", "index")
    assert "ЖЖЖЖ" not in str(page)
    assert page.find("h2", id="how-the-code-is-checked").get_text().startswith("How the code is checked")


def test_translations_harmless_alone_that_change_the_page_together_are_refused(built):
    language, name = TOGETHER_PAGE
    reason = built.refusal(f"i18n/{language}/{name.replace('.md', '.po')}", built.lines["together"])
    assert f"{TOGETHER}: " in reason and "stray" not in reason, reason  # what the page shows, not a guess
    page, english = built.html(language, name[:-3]), built.html("en", name[:-3])
    headers = [th for th in page.select("article th") if "What it holds" in th.get_text()]
    assert len(headers) == 2 and all(th.span is not None and th.span.get("lang") == "en" for th in headers)
    assert "&#" not in page.select_one("article").get_text()
    for selector in ("article h2", "article h3", "article table", "article td", "article pre", "article li",
                     "article p:not(.course-notice)"):
        assert len(page.select(selector)) == len(english.select(selector)), selector


def test_course_check_names_the_same_lines_as_the_build(built, capsys):
    status = cli.main(["--config", str(built.root / "mkdocs.yml"), "check"])
    out = capsys.readouterr().out.splitlines()
    assert status == 1
    refused = sorted(line for line in out if re.match(r"i18n/\w+/[\w-]+\.po:\d+: ", line))
    warned = sorted(re.findall(r"^WARNING +- +(i18n/\w+/[\w-]+\.po:\d+: .*)$", built.loose.stderr, re.M))
    assert refused == warned and len(refused) == 12


def test_a_missing_catalog_shows_the_notice_and_says_no_catalog(built, capsys):
    language, name = MISSING
    assert built.warning(f"i18n/{language}/{name}.po") == (
        f"i18n/{language}/{name}.po: no catalog, so docs/{name}.md is shown in English in '{language}'; "
        f"create it with: po-i18n update --lang {language}")
    page = built.html(language, name)
    notice = page.select_one("article p.course-notice")
    assert notice is not None and re.match(r"0\s?%", notice.get_text()), notice
    assert notice.a["href"] == f"../../{name}/" and notice.a["hreflang"] == "en"
    status = built.html(language, "translation-status")
    row = next(tr for tr in status.select("tbody tr") if tr.a and tr.a["href"].startswith(f"../{name}"))
    assert [td.get_text() for td in row.select("td")][1:] == ["0\u00a0%", "—", "ingen katalog"]
    english = built.html("en", "translation-status")
    row = next(tr for tr in english.select("tbody tr") if tr.a and tr.a["href"] == f"../{language}/{name}/")
    assert [td.get_text() for td in row.select("td")][2:] == ["0%", "—", "no catalog"]
    assert cli.main(["--config", str(built.root / "mkdocs.yml"), "check", "--lang", language]) == 1
    assert f"i18n/{language}/{name}.po: no catalog" in capsys.readouterr().out


def test_a_padded_conversion_spec_is_refused_and_the_badge_shows_in_english(built):
    found = re.findall(r"^WARNING +- +i18n/ru/_course\.po:(\d+): (.*)$", built.loose.stderr, re.M)
    assert [int(line) for line, _ in found] == [built.lines["padded"] + form for form in range(3)]
    assert all(reason.startswith("placeholder %(count)2000d is not in the msgid; use one of: %(count)d") for _, reason in found)
    html = str(built.html("ru", "ddp-basics"))
    assert "2 processes" in html and " " * 100 not in html


def test_an_entry_on_no_page_is_reported_not_rendered(built):
    line = built.lines["hand-added"]
    assert built.warning("i18n/sv/ddp-basics.po", line) == (
        f"i18n/sv/ddp-basics.po:{line}: msgid 'A sentence that no page has. A sentence ' is not in the English "
        "source (was it edited by hand?); restore it, and run: po-i18n update")
    assert "![![" not in str(built.html("sv", "ddp-basics"))


def test_a_right_to_left_override_before_a_code_span_is_refused(built):
    assert built.refusal("i18n/ru/torchrun-launching.po", built.lines["right-to-left override"]).endswith(
        "adds U+202E RIGHT-TO-LEFT OVERRIDE, which reorders the text shown around it; remove it")
    page = built.html("ru", "torchrun-launching")
    assert "\u202e" not in str(page)
    english = [s for s in page.select('article span[lang="en"]') if s.get_text().startswith(PREDICT)]
    assert len(english) == 1 and english[0].code.get_text() == ADDRESS.strip("`")


def test_an_ideographic_space_inside_code_is_refused(built):
    assert built.refusal("i18n/ja/torchrun-launching.po", built.lines["ideographic space"]).endswith(
        f"inline code {COMMAND} is written `torchrun\\u3000--nproc-per-node=2 default_port.py`: it has U+3000 "
        "IDEOGRAPHIC SPACE where the msgid has U+0020 SPACE; copy code exactly")
    page = built.html("ja", "torchrun-launching")
    assert not [c for c in page.select("article code") if "\u3000" in c.get_text()]
    english = [s for s in page.select("article summary") if s.get_text().startswith("You start")]  # a details title
    assert len(english) == 1 and english[0].code.get_text() == COMMAND.strip("`")
