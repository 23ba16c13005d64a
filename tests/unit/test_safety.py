"""The safety check: a translation is accepted only when it renders, as the block it is,
to the structure of its msgid (po_i18n.safety, po_i18n.skeleton)."""
from __future__ import annotations

import shutil
from pathlib import Path

import polib
import pytest

from conftest import ROOT, TRANSLATIONS, copy_project
from po_i18n import catalog as po
from po_i18n import cli
from po_i18n.check import project_check, refused_messages
from coursekit.course_strings import NOT_FOUND_TITLE
from po_i18n.interface import STATUS_NO_CATALOG, Interface
from po_i18n.markdown_engine import MarkdownEngine
from po_i18n.page_guard import TOGETHER, refused_together, render_checked
from po_i18n.project import Project
from po_i18n.render import render
from po_i18n import safety
from po_i18n.safety import GROWTH, PLAIN_TEXT, SLACK, check_for, size_limit
from po_i18n.skeleton import skeleton
from po_i18n.status_page import status_markdown

PROJECT = Project.load(ROOT / "mkdocs.yml")
PAGES_DIR = Path(__file__).parent / "pages"
INCLUDE_MENTION = 'Write `--8<-- "file.py:name"` on its own line to include a section of a program.'


@pytest.fixture(scope="module")
def check():
    return project_check(PROJECT)


@pytest.fixture(scope="module")
def page(check):
    """The check of the messages of a lesson page."""
    return check.page((PROJECT.docs_dir / "ddp-basics.md").read_text(encoding="utf-8"))


def _real(language: str, page: str, startswith: str) -> tuple[str, str]:
    entry = next(e for e in po.load_cached(PROJECT.catalog_path(language, page)) if e.msgid.startswith(startswith))
    return entry.msgid, entry.msgstr


# --- no false rejections -------------------------------------------------------------------

@pytest.mark.parametrize("language", TRANSLATIONS)
def test_every_current_translation_is_accepted(check, language):
    for path in PROJECT.catalog_files(language):
        assert refused_messages(PROJECT, path, check) == {}, path
    for name in PROJECT.pages():
        source = (PROJECT.docs_dir / name).read_text(encoding="utf-8")
        table = po.translations(po.load_cached(PROJECT.catalog_path(language, name)))
        result = render(source, table, accept=check.page(source).accept, fallback_lang="en", engine=PROJECT.engine)
        assert result.rejected == [], (name, result.rejected[:3])
        assert result.translated == result.total  # every message of every page is translated today


# --- the hostile inputs of issue 13 -------------------------------------------------------

def test_an_attribute_list_without_a_colon_is_refused(check):
    msgid, msgstr = _real("ja", "index.md", "[**Data vs model parallelism**]")
    style = '{ style="position:fixed;top:0;left:0;width:100vw;height:100vh;background:red;z-index:9999" }'
    hostile = msgstr.replace("**](", f"**{style}](", 1)
    assert hostile != msgstr and len(hostile) < size_limit(msgid)  # the structure decides, not the size
    index = check.page((PROJECT.docs_dir / "index.md").read_text(encoding="utf-8"))
    assert index.problems(msgid, hostile, ("list item",)) == [
        'changes the attributes of **bold**: adds style="position:fixed;top:0;left:0;width:100vw…"']
    for other in ('{ onclick="alert(1)" }', "{ .course-notice }", "{ #lessons }", "{ lang=en }", "{: data-x=1 }"):
        assert index.problems(msgid, msgstr.replace("**](", f"**{other}](", 1), ("list item",)), other


@pytest.mark.parametrize("target", ['"ddp_basics/train.py:setup"', '"../snippets/verification.json"', '"/etc/passwd"',
                                    "'/etc/passwd'"])
def test_an_include_line_is_refused_even_when_the_msgid_mentions_one(page, target):
    translation = 'Пишите `--8<-- "file.py:name"` на отдельной строке, чтобы включить часть программы.'
    assert page.problems(INCLUDE_MENTION, translation) == []  # a mention in a code span is not a line of syntax
    for hostile in (f"{translation}\n--8<-- {target}", f"--8<-- {target}", f"{translation}\n  -8<- {target}",
                    f"{translation}\n;--8<-- {target}", f"{translation}\n--8<--\n{target.strip(chr(34) + chr(39))}\n--8<--"):
        reasons = page.problems(INCLUDE_MENTION, hostile)
        assert any("an include line (--8<--)" in r for r in reasons), (hostile, reasons)


def test_a_translation_many_times_longer_than_its_msgid_is_refused(page):
    msgid = "How the code is checked"
    assert page.problems(msgid, "x" * 20_000, ("heading",)) == [
        f"20000 characters, more than the {GROWTH * 23 + SLACK} allowed for this 23-character msgid "
        f"({GROWTH} x its length + {SLACK}); is something pasted by mistake?"]
    assert page.problems(msgid, "x" * size_limit(msgid), ("heading",)) == []
    assert page.problems(msgid, "x" * (size_limit(msgid) + 1), ("heading",))


def test_the_size_bound_has_headroom_over_every_current_translation():
    for path in sorted((ROOT / "i18n").rglob("*.po")):
        for entry in polib.pofile(str(path)):
            if entry.msgstr and entry.msgid:
                assert 1.5 * len(entry.msgstr) <= size_limit(entry.msgid), (path, entry.msgid)


# --- structure, not patterns -------------------------------------------------------------

@pytest.mark.parametrize("msgstr", [
    "Пакет задаёт [документация](ddp-basics.md) для `RANK` и **каждого** процесса.",
    "**Каждый** процесс: `RANK` и [документация](ddp-basics.md).",  # inline order may change
    "Процесс &amp; `RANK` &#60;script&#62; [документация](ddp-basics.md) **x** \\*\\* javascript:alert(1)",
])
def test_same_elements_in_any_order_are_accepted(page, msgstr):
    assert page.problems("Each **process** reads `RANK` and the [docs](ddp-basics.md).", msgstr) == []


@pytest.mark.parametrize("msgstr, reason", [
    ("Процесс читает `РАНГ` и [документация](ddp-basics.md), **x**.", "inline code `RANK` missing or changed"),
    ("Процесс читает `RANK`, `RANK` и [документация](ddp-basics.md), **x**.", "adds inline code `RANK`"),
    ("Процесс читает `RANK` и [документация](index.md), **x**.", "link target 'ddp-basics.md' changed to 'index.md'"),
    ("Процесс читает `RANK` и [документация](javascript:alert(1)), **x**.", "changed to 'javascript:alert(1)'"),
    ("Процесс читает `RANK` и документация, **x**.", "link to 'ddp-basics.md' missing"),
    ("Процесс читает `RANK` и [документация](ddp-basics.md), x.", "**bold** missing"),
    ("Процесс *читает* `RANK` и [документация](ddp-basics.md), **x**.", "adds *emphasis*"),
    ("Процесс читает `RANK` и [**документация**](ddp-basics.md), x.", "moves **bold** into the link to `ddp-basics.md`"),
    ("Процесс <span lang=\"en\">RANK</span> `RANK` [д](ddp-basics.md) **x**", "adds raw HTML <span> with lang"),
    ("Процесс <img src=x onerror=\"alert(1)\"> `RANK` [д](ddp-basics.md) **x**", "adds raw HTML <img> with onerror src"),
    ("Процесс <!-- x --> `RANK` [д](ddp-basics.md) **x**", "adds an HTML comment"),
    ("Процесс </div> `RANK` [д](ddp-basics.md) **x**", "adds a stray end tag </div>"),
    ("Процесс ![x](a.png) `RANK` [д](ddp-basics.md) **x**", "adds image 'a.png'"),
    ("Процесс <https://evil.example> `RANK` [д](ddp-basics.md) **x**", "adds link to 'https://evil.example'"),
    ("Процесс `RANK` [д](ddp-basics.md){: onclick=\"alert(1)\" } **x**", 'adds onclick="alert(1)"'),
])
def test_changed_or_added_markup_is_refused_with_a_specific_reason(page, msgstr, reason):
    reasons = page.problems("Each **process** reads `RANK` and the [docs](ddp-basics.md).", msgstr)
    assert any(reason in r for r in reasons), reasons
    assert all("\n" not in r for r in reasons)


@pytest.mark.parametrize("line", ["--8<-- \"x.py\"", "/// note | x", "///", "!!! note \"x\"", "??? x", "=== \"x\"",
                                  "``` py", "~~~", "# x", "## x", "- x", "* x", "1. x", "> x", "{: .x }",
                                  "{ style=\"color:red\" }", "[x]: https://evil.example", "[^1]: x", "---", "===",
                                  "| a | b |", "***"])
def test_a_line_of_block_syntax_is_refused_unless_the_msgid_has_it(page, line):
    reasons = page.problems("First line\nsecond line.", f"Первая строка\n{line}")
    assert any("starts with Markdown block syntax" in r for r in reasons), (line, reasons)
    assert page.problems(f"First line\n{line}", f"Первая строка\n{line}") == [] or line in ("---", "===", "***")


def test_a_lost_backtick_is_named_first_not_only_the_code_spans_it_shifts(page):
    reasons = page.problems("Call `init_process_group()` before `DDP(model)` wraps `model`.",
                            "Вызовите `init_process_group() до того, как `DDP(model)` обернёт `model`.")
    assert reasons[0].startswith("has 5 backticks where the msgid has 6, so a code span is left open"), reasons
    assert any("inline code `init_process_group()` missing or changed" in r for r in reasons), reasons
    assert not any("backticks" in r for r in page.problems("Call `init_process_group()` first.", "Сначала `x`."))


def test_empty_lines_and_control_characters_are_refused(page):
    assert "line 2 is empty" in page.problems("A paragraph.", "Абзац.\n\nЕщё один.")[0]
    assert page.problems("A paragraph.", "Абзац.\r--8<-- \"/etc/passwd\"") == ["contains U+000D (carriage return); remove it"]
    assert page.problems("A paragraph.", "Абзац\u2028```") == ["contains U+2028 (line separator); remove it"]
    assert page.problems("A paragraph.", "Абзац\x00") == ["contains U+0000 (NUL); remove it"]


# --- each kind of message is rendered as the block it is ---------------------------------

def test_a_heading_cannot_set_its_own_attributes(page):
    assert page.problems("Wrap the model", "Оборачиваем модель", ("heading",)) == []
    assert page.problems("Wrap the model", "1. Оборачиваем модель", ("heading",)) == []  # text after "## "
    for hostile in ("Модель { .evil }", "Модель {: #evil }", "Модель { .evil", "Модель {: onclick=x"):
        assert page.problems("Wrap the model", hostile, ("heading",)), hostile  # the page's own "{ #id }" follows


def test_a_table_cell_cannot_spill_into_its_neighbours(page):
    assert page.problems("the process's number", "номер процесса", ("table cell",)) == []
    for hostile, hint in (("номер \\", "ends with a backslash"), ("номер | x", "adds a | (a cell separator)"),
                          ("номер `x", "unpaired backtick"), ("номер ``x``` y", "unpaired backtick")):
        reasons = page.problems("the process's number", hostile, ("table cell",))
        assert any(hint in r for r in reasons), (hostile, reasons)
    assert page.problems("the process's number", "номер \\| x", ("table cell",)) == []


@pytest.mark.parametrize("opener, closer", [("<!-->", "x <!-->"), ("<!--", "x -->"), ("<!-->Процесс", "x --!> y"),
                                            ("<![CDATA[ Процесс", "x ]]> y"), ("<? Процесс", "x ?> y"),
                                            ("<div title='Процесс", "x'> y")])
def test_a_construct_left_open_is_refused_although_it_is_text_on_its_own(check, opener, closer):
    # Found by the long fuzz run: each of two paragraphs translated as "<!-->" renders as
    # text on its own, but html.parser keeps the first one's comment open across blocks
    # until the "-->" inside the second, and the page between them disappears.
    source = "First paragraph.\n\nSecond paragraph.\n\nThird paragraph.\n\nFourth paragraph.\n"
    page = check.page(source)
    reasons = page.problems("First paragraph.", opener)
    assert len(reasons) == 1 and reasons[0].startswith("leaves an HTML comment, CDATA section"), reasons
    table = {"First paragraph.": opener, "Second paragraph.": "Второй абзац.", "Third paragraph.": closer,
             "Fourth paragraph.": "Четвёртый абзац."}
    english = skeleton(PROJECT.engine.convert(source))
    unchecked = render(source, table, engine=PROJECT.engine)  # what the page would be without the check
    assert skeleton(PROJECT.engine.convert(unchecked.markdown)) != english
    checked = render(source, table, accept=page.accept, fallback_lang="en", engine=PROJECT.engine)
    assert [m for m, _ in checked.rejected] == ["First paragraph."]
    assert page.problems("Third paragraph.", closer) == []  # a closer with nothing open is text
    assert page.problems("First paragraph.", "x <!--> Первый") == []  # inside a line it is text, and stays text
    both = render(source, {**table, "Third paragraph.": opener}, accept=page.accept, fallback_lang="en", engine=PROJECT.engine)
    assert [m for m, _ in both.rejected] == ["First paragraph.", "Third paragraph."]


def test_translations_harmless_alone_that_break_the_page_together_are_refused(check):
    # Found by the long fuzz run (a Japanese page): after "&#" with a ";" later on the page,
    # html.parser returns early and Python-Markdown's offsets go stale; every end tag after
    # it (here the English fallback spans') then copies text from elsewhere on the page.
    source = ("# Title\n\n| Variable | What it holds |\n| --- | --- |\n| `RANK` | the rank of the process |\n\n"
              "First paragraph.\n\nSecond paragraph with `code`.\n\n"
              "| Variable | What it holds |\n| --- | --- |\n| `RUN_ID` | the job's rendezvous id |\n\nLast paragraph; the end.\n")
    page = check.page(source)
    table = {"What it holds": "&#", "First paragraph.": "Первый абзац."}
    assert page.problems("What it holds", "&#", ("table header",)) == []  # harmless on its own
    english = render(source, {m: m for m in table}, fallback_lang="en", engine=PROJECT.engine)  # the same spans
    unchecked = render(source, table, accept=page.accept, fallback_lang="en", engine=PROJECT.engine)
    assert skeleton(PROJECT.engine.convert(unchecked.markdown)) != skeleton(PROJECT.engine.convert(english.markdown))
    # the reason names what the page really shows: the text of a code span copied into a fallback span
    reason = f"{TOGETHER}: adds inline code `code` in a <span> element"
    assert refused_together(PROJECT.engine, source, table, "en") == {"What it holds": reason}
    checked = render_checked(source, table, page, PROJECT.engine, fallback_lang="en")
    assert checked.rejected == [("What it holds", reason)] * 2  # both tables' headers
    shown = render(source, {"First paragraph.": "First paragraph."}, fallback_lang="en", engine=PROJECT.engine)
    assert skeleton(PROJECT.engine.convert(checked.markdown)) == skeleton(PROJECT.engine.convert(shown.markdown))
    assert "Первый абзац." in checked.markdown
    assert refused_together(PROJECT.engine, source, {"What it holds": "Что в ней"}, "en") == {}


def test_each_build_and_language_shares_one_check_so_a_preview_rebuild_remembers_its_judgements():
    from mkdocs.config import load_config

    from po_i18n import page_guard
    from po_i18n.build_context import check_of
    from po_i18n.markdown_engine import engine_of

    first, second = (load_config(str(ROOT / "mkdocs.yml")) for _ in range(2))  # as two mkdocs serve rebuilds
    engine = engine_of(first)  # each load makes new !relative objects: they count as the path they resolve to
    assert engine == engine_of(second)
    first.mdx_configs["toc"]["permalink_title"] = "Постоянная ссылка"  # as i18n_render does per language
    assert engine == engine_of(second) != engine_of(first)  # the engine kept its options
    assert check_of(first) is check_of(second) is project_check(PROJECT)  # one check for every language
    source = "# Title\n\n| Variable | What it holds |\n| --- | --- |\n| `RANK` | the rank |\n"
    table = {"What it holds": "&#", "Title": "Заголовок"}
    page_guard.clear_caches()
    assert refused_together(PROJECT.engine, source, table, "en") == {}  # one table: nothing after it to break
    misses = page_guard._refused_together.cache_info().misses
    assert refused_together(PROJECT.engine, source, {**table, "not on the page": "x"}, "en") == {}
    assert page_guard._refused_together.cache_info().misses == misses  # the same page and translations
    refused_together(PROJECT.engine, source, {**table, "Title": "Титул"}, "en")
    assert page_guard._refused_together.cache_info().misses == misses + 1


def test_a_page_verdict_is_not_reused_after_a_file_the_page_includes_changed(tmp_path):
    from po_i18n import page_guard

    engine = PROJECT.engine.configured("pymdownx.snippets", base_path=[str(tmp_path)])
    (tmp_path / "part.md").write_text("Included text.\n", encoding="utf-8")
    source = "# Title\n\nFirst paragraph.\n\n--8<-- \"part.md\"\n"
    table = {"Title": "Заголовок", "First paragraph.": "Первый абзац."}
    page_guard.clear_caches()
    assert refused_together(engine, source, table, "en") == {}
    misses = page_guard._refused_together.cache_info().misses
    assert refused_together(engine, source, table, "en") == {}
    assert page_guard._refused_together.cache_info().misses == misses  # nothing changed: remembered
    (tmp_path / "part.md").write_text("Included text, edited.\n", encoding="utf-8")  # as under mkdocs serve
    assert refused_together(engine, source, table, "en") == {}
    assert page_guard._refused_together.cache_info().misses == misses + 1

def test_titles_and_list_items_are_rendered_as_they_sit(page):
    assert page.problems("Why?", "# Почему?", ("details title",))  # pymdownx.blocks makes "# …" a heading
    assert page.problems("Why?", "Почему? **x**", ("note title",)) == ["adds **bold**"]
    assert page.problems("Why?", "Почему?", ("tab title",)) == []
    assert page.problems("Why?", "1. Почему?", ("details title",)) == []  # text in a title, a list in a paragraph
    assert page.problems("A right option.", "[x] Верный вариант.", ("list item",))  # a checkbox
    assert page.problems("A right option.", "# Вариант", ("quiz option",))
    assert page.problems("A quote.", "> Цитата", ("quote",))
    assert page.problems("A paragraph.", "1. Абзац", ("a kind no one knows yet",))  # rendered as a paragraph
    assert page.problems("A paragraph.", "Абзац", ("a kind no one knows yet",)) == []


def test_a_message_is_judged_with_its_pages_reference_definitions(check):
    extensions = check.page((PAGES_DIR / "mkdocs-extensions.md").read_text(encoding="utf-8"))
    msgid = "Term with a footnote[^1] and a [reference link][ref]."
    assert extensions.problems(msgid, "Термин со сноской[^1] и [ссылкой][ref].") == []
    assert extensions.problems(msgid, "Термин[^1], [ссылка][ref] и [ещё одна][ref].") == ["adds link to 'https://pytorch.org/docs/stable/distributed.html'"]
    assert extensions.problems(msgid, "Термин[^1], [ссылка][ref] и [текст][undefined].") == []  # stays text, as on the page
    lesson = check.page((PROJECT.docs_dir / "ddp-basics.md").read_text(encoding="utf-8"))
    assert lesson.problems("A paragraph.", "Абзац [текст][ref].") == []  # the lesson defines no 'ref'


def test_footnote_and_abbreviation_definitions_count_where_the_site_enables_them():
    check = check_for(MarkdownEngine(("toc", "tables", "fenced_code", "footnotes", "abbr")))
    page = check.page("A paragraph.\n\nHTML with a note[^1].\n\n[^1]: The note.\n\n*[HTML]: Hyper Text Markup Language\n")
    assert page.problems("A paragraph.", "Абзац.") == []
    assert page.problems("A paragraph.", "Абзац про HTML.") == ["adds an abbreviation with title"]
    assert any("superscript" in r for r in page.problems("A paragraph.", "Абзац[^1]."))


def test_strings_written_into_html_templates_cannot_carry_html_characters(check):
    assert check.problems("Distributed Training with PyTorch", "PyTorch'un dağıtık eğitimi", (PLAIN_TEXT,)) == []
    for hostile in ('Eğitim" onmouseover="alert(1)', "Eğitim <script>", "Eğitim &amp;"):
        assert check.problems("Distributed Training with PyTorch", hostile, (PLAIN_TEXT,)), hostile


def test_a_refused_interface_string_shows_in_english(check):
    catalog = po.load_cached(PROJECT.interface_catalog_path("ru", "course"))
    translated = Interface(catalog).text(NOT_FOUND_TITLE)
    assert translated != NOT_FOUND_TITLE.msgid
    assert Interface(catalog, frozenset({NOT_FOUND_TITLE.msgid})).text(NOT_FOUND_TITLE) == NOT_FOUND_TITLE.msgid


def test_a_site_string_is_judged_where_it_goes(tmp_path, capsys):
    project = Project.load(copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks")) / "mkdocs.yml")
    path = project.site_catalog_path("tr")
    catalog = polib.pofile(str(path))
    entry = next(e for e in catalog if e.msgid == str(project.config["site_name"]))
    entry.msgstr += '" onmouseover="alert(1)'
    catalog.save(str(path))
    assert list(refused_messages(project, path)) == [entry.msgid]
    assert cli.main(["--config", str(project.root / "mkdocs.yml"), "check", "--lang", "tr"]) == 1
    assert "adds the HTML character '\"'" in capsys.readouterr().out


# --- a missing catalog ---------------------------------------------------------------------

def test_a_missing_catalog_is_reported_counted_and_named_on_the_status_page(tmp_path, capsys):
    project = Project.load(copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks")) / "mkdocs.yml")
    project.catalog_path("sv", "torchrun-launching.md").unlink()
    config = str(project.root / "mkdocs.yml")
    assert cli.main(["--config", config, "check", "--lang", "sv"]) == 1
    out = capsys.readouterr().out
    assert ("i18n/sv/torchrun-launching.po: no catalog, so docs/torchrun-launching.md is shown in English in 'sv'; "
            "create it with: po-i18n update --lang sv") in out.splitlines()
    assert "all catalogs are valid" not in out
    assert cli.main(["--config", config, "stats", "--lang", "sv", "--min", "50"]) == 1
    stats = capsys.readouterr()
    assert any(line.startswith("sv") and "torchrun-launching" in line and "no catalog" in line for line in stats.out.splitlines())
    assert "i18n/sv/torchrun-launching.po: 0.0% translated, below --min 50%" in stats.err
    ui = Interface(po.load_cached(project.site_catalog_path("sv")))
    row = next(line for line in status_markdown(project, "sv", ui).splitlines() if "(torchrun-launching.md)" in line)
    assert row.endswith("| 0\u00a0% | — | ingen katalog |"), row
    assert ui.text(STATUS_NO_CATALOG) == "ingen katalog"
    english = status_markdown(project, "en", Interface())
    assert any(line.startswith("| sv |") and "torchrun-launching" in line and line.endswith("| — | no catalog |")
               for line in english.splitlines())


# --- the skeleton ----------------------------------------------------------------------------

def test_the_skeleton_keeps_elements_and_attributes_and_leaves_out_text():
    same = skeleton('<p>Ein <a href="x" title="Titel">Link</a> und <code>RANK</code>, <img alt="Bild" src="a.png"></p>')
    assert same == skeleton('<p><code>RANK</code> a <img src="a.png" alt="picture"> <a title="Title" href="x">link</a></p>')
    assert same != skeleton('<p><a href="y">Link</a> <code>RANK</code> <img alt="" src="a.png"></p>')  # href value
    assert same != skeleton('<p><a href="x" title="t">Link</a> <code>RANKS</code> <img alt="" src="a.png"></p>')  # code
    assert same != skeleton('<p><a href="x">Link</a> <code>RANK</code> <img alt="" src="a.png"></p>')  # title gone
    assert skeleton("<p>a</p><p>b</p>") == skeleton("<p>x</p><p>y</p>")
    assert skeleton("<p><em>a</em></p><ul><li>b</li></ul>") != skeleton("<ul><li>b</li></ul><p><em>a</em></p>")  # blocks keep order
    assert skeleton("<p><strong><em>a</em></strong></p>") != skeleton("<p><em><strong>a</strong></em></p>")  # nesting
    assert skeleton("<p>a</p>") != skeleton("<p>a<!-- x --></p>")
    assert skeleton("<p>a</p>") != skeleton("<p>a</div></p>")
    assert skeleton("<p><code>a\nb</code></p>") == skeleton("<p><code>a b</code></p>")
    assert skeleton("<pre><code>a\nb</code></pre>") != skeleton("<pre><code>a b</code></pre>")
    assert skeleton('<pre data-skeleton-x="0">') == skeleton('<pre data-skeleton-x="0">')  # never confused with a code block


def test_copies_of_a_site_share_judgements_but_read_their_own_pages(tmp_path, check):
    copy = Project.load(copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n", "hooks")) / "mkdocs.yml")
    other = project_check(copy)
    assert other is not check and other.engine != check.engine  # snippets/ lives elsewhere
    msgid = "Each **process** reads `RANK` and the [docs](ddp-basics.md)."
    check.problems(msgid, "Копия разделяет **это** `RANK` [суждение](ddp-basics.md).")
    before = safety._judge.cache_info().hits
    other.problems(msgid, "Копия разделяет **это** `RANK` [суждение](ddp-basics.md).")
    assert safety._judge.cache_info().hits == before + 1


def test_check_exits_with_one_line_on_an_invalid_mkdocs_yml(tmp_path, capsys):
    project = copy_project(tmp_path, ("mkdocs.yml", "docs", "i18n"))
    config = project / "mkdocs.yml"  # an extension that is not installed: MkDocs refuses the config
    config.write_text(config.read_text(encoding="utf-8").replace("markdown_extensions:\n", "markdown_extensions:\n  - no_such_extension\n", 1),
                      encoding="utf-8")
    shutil.rmtree(project / "i18n" / "ru")
    assert cli.main(["--config", str(config), "check", "--lang", "sv"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "no_such_extension" in err, err


# --- a refusal names the actual difference ---------------------------------------------------

@pytest.mark.parametrize("english, translated, clause", [
    ('<h2 id="usage">Usage</h2>', '<h2 id="utilisation">Utilisation</h2>', "heading id `usage` became `utilisation`"),
    ('<p>See <a href="a.md">this</a>.</p>', '<p>Voir <a href="b.md">ceci</a>.</p>', "the <a> href `a.md` became `b.md`"),
    ('<p>See <a href="x.md">this</a>.</p>', "<p>Voir ceci.</p>", "loses the link to `x.md`"),
    ("<p>Run it.</p>", "<p>Lancez <code>it</code>.</p>", "adds inline code `it`"),
    ("<p>Run it.</p>", "<p>Lancez <span>le</span>.</p>", "adds a <span> element"),
    ("<p>Run <code>a</code>.</p>", "<p>Lancez <code>b</code>.</p>", "code `a` became `b`"),
    ("<p>One.</p><p>Two.</p>", "<p>Un.</p><ul><li>Deux.</li></ul>", "a paragraph became a list"),
    ('<p><a href="d.md">x</a> <strong>y</strong></p>', '<p><a href="d.md"><strong>x</strong></a> y</p>',
     "moves **bold** into the link to `d.md`"),
    ("<p>Same.</p>", "<p>Pareil.</p>", None),
])
def test_the_first_difference_of_two_skeletons_is_one_clause(english, translated, clause):
    assert safety.difference(skeleton(english), skeleton(translated)) == clause


def test_a_translated_heading_on_a_site_without_attr_list_is_refused_naming_its_id():
    """An adopter's site without attr_list: the `{ #usage }` the renderer writes after a
    translated heading is text, so each translated heading changes its anchor; the
    refusal says which id became which, and what to enable, not a list of guesses."""
    engine = MarkdownEngine(("toc", "tables"))
    source = "# Usage\n\nRun the tool.\n\n## Options\n\nThere are two.\n"
    table = {"Usage": "Utilisation", "Run the tool.": "Lancez l'outil.", "Options": "Options"}
    assert refused_together(engine, source, table, "en") == {"Usage": (
        f"{TOGETHER}: heading id `usage` became `utilisation-usage`; translated headings keep the English id "
        "only with attr_list: add it to mkdocs.yml's markdown_extensions")}
    # with attr_list, the renderer's { #usage } after the translated heading keeps the anchor
    assert refused_together(MarkdownEngine(("toc", "tables", "attr_list")), source, table, "en") == {}
