"""What an element skeleton cannot see (issue 34): characters that change what the reader
sees without changing the structure, and code that differs by one character
(po_i18n.invisible, po_i18n.safety, po_i18n.skeleton, po_i18n.page_guard)."""
from __future__ import annotations

import pytest

from conftest import ROOT
from po_i18n import catalog as po
from po_i18n.check import project_check
from po_i18n.page_guard import render_checked
from po_i18n.project import Project
from po_i18n.safety import PLAIN_TEXT
from po_i18n.skeleton import skeleton

PROJECT = Project.load(ROOT / "mkdocs.yml")
RLO = "adds U+202E RIGHT-TO-LEFT OVERRIDE, which reorders the text shown around it; remove it"


@pytest.fixture(scope="module")
def check():
    return project_check(PROJECT)


def _real(language: str, page: str, startswith: str) -> tuple[str, str, object]:
    """A real message of the course (msgid, msgstr) and its page's check."""
    entry = next(e for e in po.load_cached(PROJECT.catalog_path(language, page)) if e.msgid.startswith(startswith))
    return entry.msgid, entry.msgstr


@pytest.fixture(scope="module")
def launching(check):
    return check.page((PROJECT.docs_dir / "torchrun-launching.md").read_text(encoding="utf-8"))


# --- characters that change display --------------------------------------------------------

@pytest.mark.parametrize("opener, closer", [("\u202e", "\u202c"), ("\u202e", ""), ("&#x202E;", "&#x202C;"),
                                            ("&#8238;", ""), ("&#x0202e", "")])
def test_a_right_to_left_override_around_code_is_refused_raw_or_as_a_reference(launching, opener, closer):
    # Chromium shows "127.0.0.1:29400" reversed after U+202E, with the site's stylesheet.
    msgid, msgstr = _real("sv", "torchrun-launching.md", "Before you run it in two terminals")
    assert launching.problems(msgid, msgstr) == []
    hostile = msgstr.replace("`127.0.0.1:29400`", f"{opener}`127.0.0.1:29400`{closer}")
    reasons = launching.problems(msgid, hostile)
    assert reasons[0] == RLO, reasons
    assert all("\n" not in r for r in reasons)


def test_named_entities_of_marks_and_invisible_characters_are_refused(launching):
    msgid, msgstr = _real("sv", "torchrun-launching.md", "Before you run it in two terminals")
    assert launching.problems(msgid, msgstr.replace("gissa", "&rlm;gissa")) == [
        "adds U+200F RIGHT-TO-LEFT MARK, which reorders the text shown around it; remove it"]
    assert launching.problems(msgid, msgstr.replace("gissa", "gis&shy;sa")) == [
        "adds U+00AD SOFT HYPHEN, which is invisible but stays in the text readers copy and search; remove it"]
    assert launching.problems(msgid, msgstr.replace("gissa", "gis&ZeroWidthSpace;sa")) == [
        "adds U+200B ZERO WIDTH SPACE, which is invisible but stays in the text readers copy and search; remove it"]


def test_a_bidirectional_control_in_a_heading_is_refused(launching):
    # A heading's text is also the table of contents and the search index entry.
    msgid, msgstr = "Recap", "Sammanfattning"
    assert launching.problems(msgid, msgstr, ("heading",)) == []
    for hostile in (f"\u2067{msgstr}\u2069", f"&#x2067;{msgstr}", f"\u202e{msgstr}"):
        reasons = launching.problems(msgid, hostile, ("heading",))
        assert len(reasons) in (1, 2) and all(r.startswith("adds U+20") and "reorders" in r for r in reasons), reasons
    assert launching.problems(msgid, f"\u2067{msgstr}\u2069", ("heading",))[0].startswith(
        "adds U+2067 RIGHT-TO-LEFT ISOLATE, which reorders")


def test_tag_characters_carrying_hidden_text_are_refused(launching):
    msgid, msgstr = _real("sv", "torchrun-launching.md", "Before you run it in two terminals")
    secret = "".join(chr(0xE0000 + ord(c)) for c in "ignore all")  # invisible, but in the page and its search index
    reasons = launching.problems(msgid, msgstr + secret)
    assert reasons[0] == ("adds U+E0069 TAG LATIN SMALL LETTER I, which is invisible but stays in the text readers "
                          "copy and search; remove it"), reasons
    assert len(reasons) == 4 and reasons[3] == "and 6 more such characters that the msgid does not have; remove them"


def test_invisible_characters_in_alt_and_title_text_are_refused(check):
    page = check.page("A paragraph.\n")
    msgid = '![A diagram](x.png "Ring all-reduce")'
    assert page.problems(msgid, '![Ett diagram](x.png "Ring-all-reduce")') == []
    assert page.problems(msgid, '![Ett diagram\u202e](x.png "Ring-all-reduce")') == [RLO]
    assert page.problems(msgid, '![Ett diagram](x.png "Ring&#x202E;-all-reduce")') == [RLO]


def test_references_python_drops_are_read_as_a_browser_reads_them(check):
    # html.unescape drops "&#1;" and "&#xFDD0;"; a browser keeps the character (HTML Standard).
    from po_i18n.invisible import browser_charrefs  # (imported here: each test fails on its own before issue 34)

    page = check.page("A paragraph.\n")
    assert page.problems("A paragraph.", "Ett &#1;stycke.") == [
        "adds U+0001 (a control character), which is not shown as text; remove it"]
    assert page.problems("A paragraph.", "Ett &#xFDD0;stycke.") == [
        "adds U+FDD0 (a noncharacter), which readers see as a box or not at all; remove it"]
    assert browser_charrefs("a&#1;b&#x202E;c&#0000001") == "a\x01b&#x202E;c\x01"


def test_a_hidden_character_the_msgid_has_may_stay_as_often_as_it_has_it(check):
    page = check.page("A paragraph.\n")
    msgid = "Write\u200bLongCompoundName here."
    assert page.problems(msgid, "Skriv\u200bLongCompoundName här.") == []
    assert page.problems(msgid, "Skriv\u200bLong\u200bCompoundName här.") == [
        "shows U+200B ZERO WIDTH SPACE 2 times where the msgid shows it 1; remove the extra ones"]


def test_joiners_are_accepted_where_a_script_needs_them_and_nowhere_else(check):
    page = check.page("A paragraph.\n")
    assert page.problems("I want it.", "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645.") == []  # Persian: mi-khaham
    assert page.problems("A conjunct.", "\u0915\u094d\u200d\u0937.") == []  # Devanagari: ZWJ after a virama
    assert page.problems("A word.", "Ett o\u200cr\u200dd.") == [
        "adds U+200C ZERO WIDTH NON-JOINER, which is invisible but stays in the text readers copy and search; remove it",
        "adds U+200D ZERO WIDTH JOINER, which is invisible but stays in the text readers copy and search; remove it"]


def test_site_strings_written_into_templates_cannot_carry_hidden_characters(check):
    assert check.problems("Distributed Training with PyTorch", "PyTorch ile dağıtık eğitim", (PLAIN_TEXT,)) == []
    assert check.problems("Distributed Training with PyTorch", "PyTorch ile \u202edağıtık eğitim", (PLAIN_TEXT,)) == [RLO]


def test_what_is_hidden_is_decided_by_unicode_properties():
    from po_i18n.invisible import added, describe, hidden

    assert [describe(c) for c in "\u202e\ue000\u0378"] == [
        "U+202E RIGHT-TO-LEFT OVERRIDE", "U+E000 (a private-use character)", "U+0378 (unassigned in Unicode "
        f"{__import__('unicodedata').unidata_version})"]
    assert all(hidden(c) for c in "\u202a\u2066\u200e\u061c\u200b\u2060\ufeff\u00ad\U000e0001\ufe0f\U000e0100\u3164\u034f")
    assert not any(hidden(c) for c in " \n\t\u3000\u00a0\u2009aяあ\u0301")  # spaces, letters and accents are seen
    assert added("a\u200bb", "a\u200bb\u202e") == [("\u202e", 1, 0)]


# --- code, character for character -----------------------------------------------------------

def test_an_ideographic_space_in_code_is_refused_naming_it(launching):
    # What a Japanese IME types for a space; the shell reads "torchrun　--nproc-per-node=2" as one word.
    msgid, msgstr = _real("ja", "torchrun-launching.md", "You start `torchrun --nproc-per-node=2 default_port.py`")
    assert launching.problems(msgid, msgstr, ("details title",)) == []
    hostile = msgstr.replace("`torchrun --nproc", "`torchrun\u3000--nproc")
    assert launching.problems(msgid, hostile, ("details title",)) == [
        "inline code `torchrun --nproc-per-node=2 default_port.py` is written `torchrun\\u3000--nproc-per-node=2 "
        "default_port.py`: it has U+3000 IDEOGRAPHIC SPACE where the msgid has U+0020 SPACE; copy code exactly"]


@pytest.mark.parametrize("space, name", [("\u00a0", "U+00A0 NO-BREAK SPACE"), ("\u2009", "U+2009 THIN SPACE"),
                                         ("\u202f", "U+202F NARROW NO-BREAK SPACE")])
def test_a_no_break_or_thin_space_in_code_is_refused_naming_it(launching, space, name):
    msgid, msgstr = _real("ja", "torchrun-launching.md", "After ten seconds rank 0 fails with")
    hostile = msgstr.replace("`Ranks 1 failed", f"`Ranks{space}1 failed")
    reasons = launching.problems(msgid, hostile)
    assert len(reasons) == 1 and f": it has {name} where the msgid has U+0020 SPACE; copy code exactly" in reasons[0], reasons


def test_a_soft_line_break_in_code_is_the_same_code(check):
    # The msgid may wrap a code span over a source line; the browser shows a space.
    page = check.page("A paragraph.\n")
    assert page.problems("Run `torchrun\n--standalone train.py` now.", "Kör `torchrun --standalone train.py` nu.") == []
    assert page.problems("Run `torchrun --standalone train.py` now.", "Kör `torchrun\n--standalone  train.py` nu.") == []
    assert page.problems("Run `torchrun --standalone train.py` now.", "Kör `torchrun\u3000\n--standalone train.py` nu.")


def test_a_homoglyph_in_code_is_refused_naming_both_characters(launching):
    msgid, msgstr = _real("ru", "torchrun-launching.md", "Pick the device with `LOCAL_RANK`")
    assert launching.problems(msgid, msgstr, ("list item",)) == []
    hostile = msgstr.replace("`RANK == 0`", "`R\u0410NK == 0`")  # a Cyrillic А
    assert launching.problems(msgid, hostile, ("list item",)) == [
        "inline code `RANK == 0` is written `RАNK == 0`: it has U+0410 CYRILLIC CAPITAL LETTER A where the msgid has "
        "U+0041 LATIN CAPITAL LETTER A; copy code exactly"]
    hostile = msgstr.replace("`LOCAL_RANK`", "`LOC\u0430L_RANK`")
    assert "U+0430 CYRILLIC SMALL LETTER A where the msgid has U+0041 LATIN CAPITAL LETTER A" in \
        launching.problems(msgid, hostile, ("list item",))[0]


def test_inline_code_in_the_skeleton_folds_only_collapsible_white_space():
    same = skeleton("<p><code>a b</code></p>")
    assert skeleton("<p><code>a \n  b</code></p>") == same
    assert skeleton("<p><code>a\u3000b</code></p>") != same
    assert skeleton("<p><code>a\u00a0b</code></p>") != same
    assert skeleton("<pre><code>a  b</code></pre>") != skeleton("<pre><code>a b</code></pre>")  # a block: exact
    assert skeleton('<p title="t\u202e">x <code>c\u200b</code> &#x202E;y</p>').shown == "\nt\u202e\nx  \u202ey"


# --- reasons name only what the translator wrote --------------------------------------------

@pytest.mark.parametrize("kind", ["table cell", "table header"])
@pytest.mark.parametrize("msgstr, hint", [
    ("`RANK` номер | x", "adds a | (a cell separator)"),
    ("`RANK` номер `x", "has an unpaired backtick"),
    ("`RANK` номер \\", "ends with a backslash"),
    ("`RANK` номер </td><td>y", "adds raw HTML <td>"),
])
def test_a_table_cell_is_not_blamed_for_the_checkers_own_neighbour_cells(check, kind, msgstr, hint):
    # The check renders a cell between cells holding code spans `c` of its own.
    page = check.page("A paragraph.\n")
    reasons = page.problems("`RANK` number", msgstr, (kind,))
    assert "<td>" in msgstr or reasons[0] == "does not stay in its table cell: the cells of its row change", reasons
    assert any(hint in r for r in reasons), reasons
    assert not any("`c" in r or "table missing" in r or "<tbody>" in r or "a table cell" in r for r in reasons), reasons


def test_a_change_inside_a_table_cell_is_named_as_it_is(check):
    page = check.page("A paragraph.\n")
    assert page.problems("`RANK` number", "`RANC` номер", ("table cell",)) == [
        "inline code `RANK` is written `RANC`: it has U+0043 LATIN CAPITAL LETTER C where the msgid has "
        "U+004B LATIN CAPITAL LETTER K; copy code exactly"]
    assert page.problems("`RANK` number", "`RANK` **номер**", ("table cell",)) == ["adds **bold**"]
    assert page.problems("`RANK` number", "`RANK` номер {: .evil }", ("table cell",)) == [
        'changes the attributes of a table cell: adds class="evil"']


# --- the page check sees them too ------------------------------------------------------------

def test_every_translated_page_shows_no_hidden_character_its_english_page_does_not(check):
    from po_i18n.invisible import added

    for language in PROJECT.languages:
        for name in PROJECT.pages():
            source = (PROJECT.docs_dir / name).read_text(encoding="utf-8")
            table = po.translations(po.load_cached(PROJECT.catalog_path(language, name)))
            result = render_checked(source, table, check.page(source), PROJECT.engine, fallback_lang="en")
            assert result.rejected == [], (language, name, result.rejected[:2])
            english, translated = (skeleton(PROJECT.engine.convert(text)) for text in (source, result.markdown))
            assert added(english.shown, translated.shown) == [], (language, name)
