"""The constructs that once broke the translation engine, one minimal page each.

Each page is held to the fuzzer's four properties (:func:`po_i18n.fuzz.check`: exact
bytes with an empty catalog and with msgid -> itself, the same element tree under a
pseudo-translation, every prose word in some message), with the engine that knows the
construct, and its messages are named. The truth is Python-Markdown with the extension
(rendered with it first, ``DEFAULT_ENGINE.convert``), not CommonMark.
"""
from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from po_i18n.fuzz import check, pseudo, structure
from po_i18n.markdown_engine import DEFAULT_ENGINE, MarkdownEngine
from po_i18n.render import render
from po_i18n.segment import segment, syntax_warnings


def messages(source: str, engine: MarkdownEngine = DEFAULT_ENGINE) -> list[tuple[str, str]]:
    return [(s.kind, s.msgid) for s in segment(source, engine)]


def translated_html(source: str, engine: MarkdownEngine = DEFAULT_ENGINE) -> BeautifulSoup:
    out = render(source, {s.msgid: pseudo(s.msgid) for s in segment(source, engine)}, engine=engine).markdown
    return BeautifulSoup(engine.convert(out, without=("pymdownx.snippets",)), "html.parser")


def test_01_an_attribute_list_under_a_paragraph_is_its_attributes_not_text():
    source = "Lorem ipsum.\n{ .annotate }\n"
    check(source)
    assert messages(source) == [("paragraph", "Lorem ipsum.")]
    assert translated_html(source).select_one("p.annotate").get_text() == "Lórém ípšúm."


@pytest.mark.parametrize("source, inner", [
    ("/// html | div.result\nSome *text*.\n///\n", "Some *text*."),
    ("/// fancylists | type=a\n1. one\n2. two\n///\n", "one"),
    ("![img](a.png)\n\n/// caption | <\nCap *text*\n///\n", "Cap *text*"),
    ("![img](a.png)\n\n/// figure-caption | ^1\nFigure *text*\n///\n", "Figure *text*"),
])
def test_02_a_block_argument_is_not_a_title(source, inner):
    check(source)
    found = messages(source)
    assert inner in [m for _, m in found]
    assert not [k for k, _ in found if k.endswith(" title")]
    assert not any("|" in m or m in ("div.result", "type=a", "<", "^1") for _, m in found)


def test_02_blocks_with_a_title_keep_their_title_message():
    source = "/// note | A *title*\nBody.\n///\n\n/// details | Q\n    open: true\n\nA.\n///\n"
    check(source)
    assert messages(source) == [("note title", "A *title*"), ("paragraph", "Body."), ("details title", "Q"),
                                ("paragraph", "A.")]


def test_03_a_tab_set_opened_with_an_exclamation_mark_is_a_new_tab_set():
    source = '===! "A"\n    Tab a.\n\n===! "B"\n    Tab b.\n'
    check(source)
    assert messages(source) == [("tab title", "A"), ("paragraph", "Tab a."), ("tab title", "B"), ("paragraph", "Tab b.")]
    assert len(translated_html(source).select("div.tabbed-set")) == 2


def test_04_a_fence_left_open_in_a_tab_ends_with_the_tab_as_the_engine_ends_it():
    source = '=== "A"\n    ```sh\n    echo hi\n\n=== "B"\n    Prose b.\n'
    check(source)
    found = messages(source)
    assert ("tab title", "B") in found and ("paragraph", "Prose b.") in found
    # superfences renders an unclosed fence as text, so it is prose there and here
    assert ("paragraph", "```sh echo hi") in found


def test_05_a_fence_under_a_fancy_list_marker_is_code():
    source = "a.  Install it:\n\n    ```sh\n    pip install x\n    ```\n\nb.  Use it.\n"
    check(source)
    assert [m for _, m in messages(source)] == ["Install it:", "Use it."]


def test_06_a_closing_fence_indented_past_its_opening_does_not_close_it():
    source = '=== "Ex"\n\n    ````md\n    === "Inner"\n        text\n        ````\n\nProse after.\n'
    check(source)
    found = messages(source)
    assert ("tab title", "Inner") in found  # the engine renders the inner tab: no closed fence holds it
    assert found[-1] == ("paragraph", "Prose after.")
    closed = '=== "Ex"\n\n    ````md\n    === "Inner"\n        text\n    ````\n\nProse after.\n'
    check(closed)
    assert messages(closed) == [("tab title", "Ex"), ("paragraph", "Prose after.")]


def test_07_an_admonition_inside_a_definition_is_an_admonition():
    source = "Term\n:   !!! note\n        Body of note.\n\n    More def.\n"
    check(source)
    assert messages(source) == [("definition term", "Term"), ("default note title", "Note"), ("paragraph", "Body of note."),
                                ("paragraph", "More def.")]


def test_08_a_callout_marker_is_markup_and_its_title_a_title():
    source = "> [!note]\n> Body text here.\n\n> [!tip] Custom title\n> Body.\n"
    check(source)
    assert messages(source) == [("default note title", "Note"), ("quote", "Body text here."), ("tip title", "Custom title"),
                                ("quote", "Body.")]
    html = translated_html(source)
    assert [d["class"] for d in html.select("div.admonition")] == [["admonition", "note"], ["admonition", "tip"]]


def test_09_a_line_with_a_snippet_section_marker_is_dropped_and_never_joined():
    source = "Mark it with `--8<-- [start:name]`.\nThen include it by name.\n"
    check(source)
    assert messages(source) == [("paragraph", "Then include it by name.")]


@pytest.mark.parametrize("source, expected", [
    ("Text[^1].\n\n[^1]: First para.\n\n    Second para.\n", ["Text[^1].", "First para.", "Second para."]),
    ("Term\n:   Definition.\n\n    Second paragraph of it.\n", ["Term", "Definition.", "Second paragraph of it."]),
    ("1. Item.\n\n    Continued paragraph.\n\n        code\n", ["Item.", "Continued paragraph."]),
    ("- Item.\n\n      Six spaces: prose.\n", ["Item.", "Six spaces: prose."]),
])
def test_10_indented_continuation_paragraphs_are_prose(source, expected):
    check(source)
    assert [m for _, m in messages(source)] == expected


def test_11_a_translated_heading_without_an_id_keeps_the_english_anchor():
    source = "# Gradient sync\n\nText.\n\n## Gradient sync\n\n## With `code` { .cls }\n\n## Own { #own }\n"
    check(source)
    english = BeautifulSoup(DEFAULT_ENGINE.convert(source), "html.parser")
    catalog = {"Gradient sync": "Синхронизация градиентов", "With `code`": "С `code`", "Own": "Свой"}
    out = render(source, catalog, engine=DEFAULT_ENGINE).markdown
    ids = [h["id"] for h in BeautifulSoup(DEFAULT_ENGINE.convert(out), "html.parser").find_all(re.compile("^h[1-6]$"))]
    assert ids == [h["id"] for h in english.find_all(re.compile("^h[1-6]$"))] == [
        "gradient-sync", "gradient-sync_1", "with-code", "own"]
    assert "## С `code` { #with-code .cls }" in out


def test_12_a_backslash_before_a_line_end_is_no_hard_break_for_python_markdown():
    source = "line three\\\nline four\n"
    check(source)
    assert messages(source) == [("paragraph", "line three\\ line four")]
    escapeall = MarkdownEngine(("pymdownx.escapeall",), {"pymdownx.escapeall": {"hardbreak": True}})
    assert messages(source, escapeall) == [("paragraph", "line three\\\nline four")]
    check(source, escapeall)


NO_DETAILS = MarkdownEngine(("toc", "tables", "fenced_code", "admonition", "pymdownx.superfences"))


def test_13_old_style_details_without_the_extension_is_text_and_a_warning():
    source = '??? example "Title"\n    Body.\n'
    check(source, NO_DETAILS)
    assert messages(source, NO_DETAILS) == [("paragraph", '??? example "Title" Body.')]
    assert syntax_warnings(source, NO_DETAILS) == [
        (1, "'???' is pymdownx.details syntax, which mkdocs.yml does not enable: it renders as text; "
            "add pymdownx.details to markdown_extensions or use pymdownx.blocks")]
    assert syntax_warnings(source, DEFAULT_ENGINE) == []
    assert messages(source, DEFAULT_ENGINE) == [("example title", "Title"), ("paragraph", "Body.")]


def test_14_a_message_translated_as_itself_gives_back_the_source_bytes():
    source = "A paragraph that is\nwrapped here and\n  there.\n\n- an item\n  wrapped\n"
    segs = segment(source, DEFAULT_ENGINE)
    assert [s.msgid for s in segs] == ["A paragraph that is wrapped here and there.", "an item wrapped"]
    result = render(source, {s.msgid: s.msgid for s in segs}, engine=DEFAULT_ENGINE)
    assert result.markdown == source
    assert result.translated == result.total == 2 and result.percent == 100.0


def test_11_plain_headings_slug_as_the_toc_extension_does_around_taken_ids():
    """Plain-text headings are slugged without rendering (toc's slugify and unique): the
    ids must be those the engine gives, an attribute-list id elsewhere taken."""
    source = "# Gradient sync\n\n## Gradient sync\n\nx\n{ #gradient-sync_2 }\n\n## Gradient sync\n\n## Own { #own }\n"
    english = BeautifulSoup(DEFAULT_ENGINE.convert(source), "html.parser").find_all(re.compile("^h[1-6]$"))
    out = render(source, {"Gradient sync": "Синхронизация"}, engine=DEFAULT_ENGINE).markdown
    ids = [h["id"] for h in BeautifulSoup(DEFAULT_ENGINE.convert(out), "html.parser").find_all(re.compile("^h[1-6]$"))]
    assert ids == [h["id"] for h in english] == ["gradient-sync", "gradient-sync_1", "gradient-sync_3", "own"]


def _material_icons() -> MarkdownEngine:
    """The default engine with pymdownx.emoji as Material documents it (its icon index and
    SVG generator: "Icons, Emojis" in Material's reference), so that ``:octicons-…:`` is an
    icon element that an attribute list can follow."""
    from material.extensions.emoji import to_svg, twemoji

    return MarkdownEngine(DEFAULT_ENGINE.extensions + ("pymdownx.emoji",),
                          {**DEFAULT_ENGINE.configs, "pymdownx.emoji": {"emoji_index": twemoji, "emoji_generator": to_svg}})


def _headings(html: str) -> list[tuple[str, list[list[str]]]]:
    """Each heading's id and the classes of the icons in it."""
    soup = BeautifulSoup(html, "html.parser")
    return [(h.get("id"), [s.get("class") for s in h.select("span.twemoji")]) for h in soup.find_all(re.compile("^h[1-6]$"))]


def test_15_an_icon_with_an_attribute_list_ending_a_heading_keeps_it_and_the_heading_its_english_id():
    """attr_list gives a heading the list that follows a space (HEADER_RE ``[ ]+{…}``); one
    touching an icon (``:icon:{: .cls }``, as Material's own docs write it) is the icon's."""
    icons = _material_icons()
    source = ("## Sponsor :octicons-heart-fill-16:{: .heart-throb}\n\nText.\n\n## Title {: #own-id }\n\n"
              "## Star :material-star:{ .cls } {#star-id}\n\n## Last :material-star:{ .cls } { .big }\n")
    check(source, icons)
    assert messages(source, icons) == [
        ("heading", "Sponsor :octicons-heart-fill-16:{: .heart-throb}"), ("paragraph", "Text."),
        ("heading", "Title"), ("heading", "Star :material-star:{ .cls }"), ("heading", "Last :material-star:{ .cls }")]
    english = _headings(icons.convert(source))
    assert english == [("sponsor", [["twemoji", "heart-throb"]]), ("own-id", []), ("star-id", [["twemoji", "cls"]]),
                       ("last", [["twemoji", "cls"]])]
    catalog = {"Sponsor :octicons-heart-fill-16:{: .heart-throb}": "Спонсор :octicons-heart-fill-16:{: .heart-throb}",
               "Title": "Заголовок", "Star :material-star:{ .cls }": "Звезда :material-star:{ .cls }",
               "Last :material-star:{ .cls }": "Последний :material-star:{ .cls }"}
    out = render(source, catalog, engine=icons).markdown
    assert _headings(icons.convert(out)) == english
    assert "## Спонсор :octicons-heart-fill-16:{: .heart-throb} { #sponsor }\n" in out
    assert "## Последний :material-star:{ .cls } { #last .big }\n" in out


UNTITLED = ('!!! note\n    Body one.\n\n    Body two.\n\n??? warning\n    Folded.\n\n???+ tip\n    Open.\n\n'
            '/// note\nBlock body.\n///\n\n/// details\n    type: danger\n\nWith options.\n///\n\n> [!tip]\n> Callout body.\n\n'
            '!!! note ""\n    Explicitly untitled.\n\n/// note |\nExplicitly untitled too.\n///\n')


def _titles(html: str) -> list[str]:
    soup = BeautifulSoup(html, "html.parser")
    return [t.get_text() for t in soup.select("p.admonition-title, summary")]


def test_16_the_default_title_of_an_untitled_callout_is_a_message_written_as_an_explicit_title():
    """``!!! note`` shows "Note" (admonition capitalizes its type; pymdownx.details,
    pymdownx.blocks and pymdownx.quotes likewise): that text is a message, and its
    translation becomes the container's explicit title in the syntax the page uses.
    ``!!! note ""`` and ``/// note |`` show no title, and have no title message."""
    check(UNTITLED)
    assert [m for m in messages(UNTITLED) if "title" in m[0]] == [
        ("default note title", "Note"), ("default warning title", "Warning"), ("default tip title", "Tip"),
        ("default note title", "Note"), ("default details title", "Danger"), ("default tip title", "Tip")]
    assert _titles(DEFAULT_ENGINE.convert(UNTITLED)) == ["Note", "Warning", "Tip", "Note", "Danger", "Tip"]
    catalog = {"Note": 'Заметка "важно"', "Warning": "Внимание", "Tip": "Совет", "Danger": "Опасно"}
    out = render(UNTITLED, catalog, engine=DEFAULT_ENGINE).markdown
    assert '!!! note "Заметка "важно""\n' in out and "/// note | Заметка \"важно\"\n" in out
    assert "> [!tip] Совет\n" in out and "/// details | Опасно\n    type: danger\n" in out
    html = DEFAULT_ENGINE.convert(out)
    assert _titles(html) == ['Заметка "важно"', "Внимание", "Совет", 'Заметка "важно"', "Опасно", "Совет"]
    assert structure(html) == structure(DEFAULT_ENGINE.convert(UNTITLED))
    # untranslated, or translated as itself: the English page's bytes
    assert render(UNTITLED, {}, engine=DEFAULT_ENGINE).markdown == UNTITLED
    same = {s.msgid: s.msgid for s in segment(UNTITLED, DEFAULT_ENGINE)}
    result = render(UNTITLED, same, engine=DEFAULT_ENGINE, fallback_lang=None)
    assert result.markdown == UNTITLED and result.translated == result.total
    assert render(UNTITLED, {}, engine=DEFAULT_ENGINE, fallback_lang="en").markdown.startswith("!!! note\n")

# Numbers 30 and on: Markdown in HTML, raw HTML between prose, and lists as
# Python-Markdown reads them (where CommonMark, which the segmenter parses with, differs).

PLAIN = MarkdownEngine(("toc", "tables", "fenced_code", "attr_list", "md_in_html"))


@pytest.mark.parametrize("source, expected", [
    ('<div markdown>\nSome *text* here.\n</div>\n', ["Some *text* here."]),
    ('<div markdown="1">\nSome text here.\n\n- item one\n- item two\n</div>\n', ["Some text here.", "item one", "item two"]),
    ('<div markdown="block">\n# Heading here\n\nPara here.\n</div>\n', ["Heading here", "Para here."]),
    ('<div markdown>\n<div markdown>\nInner text.\n</div>\nOuter text.\n</div>\n', ["Inner text.", "Outer text."]),
    ('<div markdown>Some text.\n\nMore text.</div>\n', ["Some text.", "More text."]),
    ('<p markdown>Some *para* text.</p>\n', ["Some *para* text."]),
    ('<details markdown>\n<summary markdown>Summary *text*</summary>\n\nBody text here.\n</details>\n',
     ["Summary *text*", "Body text here."]),
    ('<div class="grid cards" markdown>\n\n-   __Card one__\n\n    ---\n\n    Body one.\n\n</div>\n',
     ["__Card one__", "Body one."]),
])
def test_30_markdown_in_html_is_messages_and_its_tags_markup(source, expected):
    check(source)
    assert [m for _, m in messages(source)] == expected
    assert not any("<" in m for _, m in messages(source))
    out = render(source, {m: pseudo(m) for m in expected}, engine=DEFAULT_ENGINE).markdown
    assert re.findall(r"<[^>]*>", out) == re.findall(r"<[^>]*>", source)  # the tags untouched


def test_31_a_div_without_markdown_stays_raw_html_and_no_message():
    source = '<div markdown>\n<div>\nraw words\n\nmore raw\n</div>\n\nProse here.\n</div>\n'
    check(source, raw_words=frozenset({"raw", "words", "more"}))
    assert messages(source) == [("paragraph", "Prose here.")]


@pytest.mark.parametrize("source", [
    "Para one.\n\n<!-- a comment -->\n\nPara two.\n",
    "Para one.\n\n<!--\nsome comment\nmore\n-->\n\nPara two.\n",
    "Para one.\n<!-- a comment -->\nPara two.\n",
    "Para one.\n<div>raw</div>\nPara two.\n",
    'Para one.\n\n<div class="x">\nraw\n\nraw\n</div>\nPara two.\n',
    "- item one\n\n    <!-- comment -->\n\n- item two\n",
])
def test_32_html_between_paragraphs_is_no_message_and_the_prose_around_it_is(source):
    check(source, raw_words=frozenset({"raw"}))
    found = [m for _, m in messages(source)]
    assert found in (["Para one.", "Para two."], ["item one", "item two"])
    out = render(source, {m: pseudo(m) for m in found}, engine=DEFAULT_ENGINE).markdown
    assert re.findall(r"<[^>]*>|<!--.*?-->", out, re.S) == re.findall(r"<[^>]*>|<!--.*?-->", source, re.S)


@pytest.mark.parametrize("source, expected", [
    ("!!! note\n    <div>text here</div>\n\n    After.\n", ["Note", "<div>text here</div>", "After."]),
    ("- item\n\n    <div>text here</div>\n", ["item", "<div>text here</div>"]),
    ("<span>\nSpan text here.\n</span>\n", ["<span> Span text here. </span>"]),
])
def test_33_html_the_engine_reads_inline_is_part_of_the_prose(source, expected):
    """Python-Markdown takes raw HTML blocks only at a line's first columns of the page
    (its html_block preprocessor runs before any container is parsed) and only for block
    tags; CommonMark takes these as HTML blocks and their words reached no catalog."""
    check(source)
    assert [m for _, m in messages(source)] == expected


@pytest.mark.parametrize("source, expected", [
    ("Para here:\n- one\n- two\n", ["Para here: - one - two"]),
    ("Para here:\n1. one\n2. two\n", ["Para here: 1. one 2. two"]),
    ("Text\n2. two\n", ["Text 2. two"]),
    ("!!! note\n    Para here:\n    * one\n", ["Note", "Para here: * one"]),
    ("- item one\n\n  two-space continuation\n- item two\n", ["item one", "two-space continuation - item two"]),
    ("- one\n\n    para\n- two\n", ["one", "para - two"]),
    ("- one\n\n    para\n    - nested\n", ["one", "para - nested"]),
])
def test_34_a_list_marker_continuing_a_paragraph_is_text_for_python_markdown(source, expected):
    """A Python-Markdown list starts only a block (the run between blank lines), so a
    marker right under paragraph text continues the paragraph; CommonMark starts a list
    there, and the messages were cut where the engine shows one paragraph."""
    check(source)
    assert [m for _, m in messages(source)] == expected
    assert pseudo(expected[-1]) in [p.get_text() for p in translated_html(source).find_all(["p", "li"])]


@pytest.mark.parametrize("source, expected", [
    ("- one\n  - two\n  - three\n- four\n", ["one", "two", "three", "four"]),
    ("1. one\n   1. two\n2. three\n", ["one", "two", "three"]),
    ("- one\n    - nested\n- two\n", ["one", "nested", "two"]),
    ("- item one\ncontinued lazily\n- item two\n", ["item one continued lazily", "item two"]),
    ("# Title\n- one\n", ["Title", "one"]),
])
def test_35_lists_indented_every_way_keep_one_message_per_item(source, expected):
    check(source)
    assert [m for _, m in messages(source)] == expected


def test_36_a_parenthesis_marker_is_a_list_only_with_fancylists():
    source = "1) one\n2) two\n"
    check(source)
    check(source, PLAIN)
    assert [m for _, m in messages(source)] == ["one", "two"]
    assert messages(source, PLAIN) == [("paragraph", "1) one 2) two")]


@pytest.mark.parametrize("source, expected", [
    ('> !!! note "Outer"\n>     Outer para.\n>\n>     !!! tip\n>         Inner one.\n',
     [("note title", "Outer"), ("quote", "Outer para."), ("default tip title", "Tip"), ("quote", "Inner one.")]),
    ('> > !!! note "Deep"\n> >     Deep para.\n', [("note title", "Deep"), ("quote", "Deep para.")]),
    ('- item\n\n    > !!! note "T"\n    >     Body text.\n',
     [("list item", "item"), ("note title", "T"), ("quote", "Body text.")]),
    ('- item\n\n    > [!note] Quoted\n    > Callout body.\n',
     [("list item", "item"), ("note title", "Quoted"), ("quote", "Callout body.")]),
    ('> !!! note "Outer"\n>     Outer para.\n>\n>     > [!tip] Inner\n>     > Inner body.\n',
     [("note title", "Outer"), ("quote", "Outer para."), ("tip title", "Inner"), ("quote", "Inner body.")]),
    ("> //// note | Outer\n> Outer para.\n>\n> /// tip | Inner\n> Inner para.\n> ///\n> ////\n",
     [("note title", "Outer"), ("quote", "Outer para."), ("tip title", "Inner"), ("quote", "Inner para.")]),
])
def test_40_a_callout_in_a_block_quote_is_a_callout_with_its_title_and_body_messages(source, expected):
    """Python-Markdown strips ``[ ]{0,3}>[ ]?`` a level (BlockQuoteProcessor.clean) and
    parses what is left, containers included; the segmenter looked for markers only at a
    container's body column, so the marker line and the body became one message and the
    translated body turned into the title."""
    check(source)
    assert messages(source) == expected
    titles = [p.get_text() for p in translated_html(source).select("p.admonition-title")]
    assert titles == [pseudo(m) for k, m in expected if k.endswith("title")]


@pytest.mark.parametrize("source, expected", [
    ('!!! note "Outer"\n\tOuter para.\n', [("note title", "Outer"), ("paragraph", "Outer para.")]),
    ('!!! note "A"\n\tPara one.\n\n\t!!! tip "B"\n\t\tPara two.\n',
     [("note title", "A"), ("paragraph", "Para one."), ("tip title", "B"), ("paragraph", "Para two.")]),
    ('??? note "T"\n\tFirst para.\n\n\tSecond para.\n', [("note title", "T"), ("paragraph", "First para."),
                                                        ("paragraph", "Second para.")]),
    ('=== "Tab"\n\tTab text.\n', [("tab title", "Tab"), ("paragraph", "Tab text.")]),
    ('> !!! note "T"\n>\t    Body here.\n', [("note title", "T"), ("quote", "Body here.")]),
    ('- item\n\n\t!!! note "T"\n\t\tBody here.\n', [("list item", "item"), ("note title", "T"), ("paragraph", "Body here.")]),
])
def test_41_a_body_indented_with_tabs_is_read_as_the_engine_expands_them(source, expected):
    """markdown/core.py expands every tab to 4 columns before any block is parsed; the
    segmenter stripped only spaces, so a tab-indented body reached no message. The tabs
    stay in the page: every byte outside a message is the source's."""
    check(source)
    assert messages(source) == expected
    assert render(source, {m: m for _, m in expected}, engine=DEFAULT_ENGINE).markdown == source
    out = render(source, {m: pseudo(m) for _, m in expected}, engine=DEFAULT_ENGINE).markdown
    assert out.count("\t") == source.count("\t")
