"""The segmenter and renderer: byte-exact round trips and structure-preserving translation."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from conftest import ROOT
from po_i18n.markdown_engine import DEFAULT_ENGINE, engine_for
from po_i18n.render import render as _render
from po_i18n.segment import normalize_inline, segment as _segment

COURSE = sorted((ROOT / "docs").rglob("*.md"))
FIXTURES = sorted((Path(__file__).parent / "pages").glob("*.md"))
PAGES = COURSE + FIXTURES
IDS = [p.relative_to(ROOT).as_posix() for p in PAGES]
SITE = engine_for(ROOT / "mkdocs.yml")


def engine_of_page(page: Path):
    """The course's pages render with the course's mkdocs.yml; the fixture pages with the
    default engine (the extensions Material documents), which enables all their syntax."""
    return SITE if page in COURSE else DEFAULT_ENGINE


_CURRENT = {"engine": DEFAULT_ENGINE}


def segment(source, engine=None):
    return _segment(source, engine or _CURRENT["engine"])


def render(source, catalog, **kw):
    return _render(source, catalog, engine=kw.pop("engine", None) or _CURRENT["engine"], **kw)


@pytest.fixture(autouse=True)
def page_engine(request):
    """Segment and render each page with the engine its site builds it with."""
    page = request.node.callspec.params.get("page") if hasattr(request.node, "callspec") else None
    _CURRENT["engine"] = engine_of_page(page) if page is not None else DEFAULT_ENGINE
    yield _CURRENT["engine"]
    _CURRENT["engine"] = DEFAULT_ENGINE

# Markup a translation must carry over untouched: code spans, link and footnote
# targets, reference labels, HTML tags and entities.
_PROTECTED = re.compile(r"(`+[^`]*`+|\]\([^)]*\)|\]\[[^\]]*\]|\[\^[^\]]+\]|<[^>]+>|&\w+;|\{[^}]*\})")
_ACCENTS = str.maketrans("aeiouyAEIOUYcnsz", "áéíóúýÁÉÍÓÚÝçñšž")


def pseudo(msgid: str) -> str:
    """A pseudo-translation: every vowel accented, protected markup kept as it is."""
    parts = _PROTECTED.split(msgid)
    return "".join(part if i % 2 else part.translate(_ACCENTS) for i, part in enumerate(parts))


@pytest.fixture
def to_html(page_engine):
    """Python-Markdown with exactly the extensions and options of the page's site."""
    return page_engine.convert


def structure(html: str) -> list[tuple[str, tuple[str, ...]]]:
    """The element tree as (tag, attribute names) in document order; generated ids ignored."""
    soup = BeautifulSoup(html, "html.parser")
    return [(t.name, tuple(sorted(k for k in t.attrs if k != "id"))) for t in soup.find_all(True)]


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_round_trip_with_an_empty_catalog_is_byte_exact(page):
    source = page.read_text(encoding="utf-8")
    result = render(source, {})
    assert result.markdown == source
    assert result.translated == 0
    assert len(result.missing) == result.total == len(segment(source))


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_pseudo_translation_keeps_the_html_structure(page, to_html):
    source = page.read_text(encoding="utf-8")
    catalog = {s.msgid: pseudo(s.msgid) for s in segment(source)}
    result = render(source, catalog)
    assert result.missing == []
    assert result.translated == result.total > 0
    assert structure(to_html(result.markdown)) == structure(to_html(source))


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_english_fallback_is_marked_with_its_language_and_otherwise_unchanged(page, to_html):
    source = page.read_text(encoding="utf-8")
    segments = segment(source)
    half = {s.msgid: pseudo(s.msgid) for s in segments[::2]}  # every other message translated
    result = render(source, half, fallback_lang="en")
    english = [s for s in segments if s.msgid not in half]
    marked = BeautifulSoup(to_html(result.markdown), "html.parser").select('span[lang="en"]')
    wrapped = [s for s in english if not s.kind.endswith(" title")]
    assert len(marked) == len(wrapped) > 0
    assert all(m.parent.name != "span" for m in marked)  # one span per message, never nested
    plain = BeautifulSoup(to_html(render(source, half).markdown), "html.parser")
    with_spans = BeautifulSoup(to_html(result.markdown), "html.parser")
    for span in with_spans.select('span[lang="en"]'):
        span.unwrap()
    assert structure(str(with_spans)) == structure(str(plain))
    assert with_spans.get_text() == plain.get_text()


def test_fallback_lang_must_be_a_language_tag():
    with pytest.raises(ValueError, match="not a language tag"):
        render("Text.\n", {}, fallback_lang='en" onmouseover="x')


def test_a_mark_goes_on_the_english_span_escaped_and_only_there(to_html):
    """The preview's mark (po_i18n.preview) is attributes on the span of each message shown
    in English, whatever the reason; a value can never become markup, a translated message
    and a block title are never marked."""
    source = "# Title\n\nFirst.\n\nSecond.\n\n/// note | Careful\nThird.\n///\n"
    seen = []

    def mark(seg, reason):
        seen.append((seg.msgid, reason))
        return {"class": "why", "title": f'{seg.msgid}" onmouseover="x" <b>'}

    result = render(source, {"Title": "Titel", "Second.": "Andra.", "Third.": "Tredje."}, fallback_lang="en", mark=mark,
                    accept=lambda seg, msgstr: "refused" if msgstr == "Tredje." else None)
    assert seen == [("First.", None), ("Third.", "refused")]  # asked for what is wrapped only
    soup = BeautifulSoup(to_html(result.markdown), "html.parser")
    spans = soup.select("span.why")
    assert [s.get_text() for s in spans] == ["First.", "Third."]  # not "Careful": a title is never wrapped
    assert spans[0]["title"] == 'First." onmouseover="x" <b>' and not soup.select("[onmouseover], b")
    assert all(s["lang"] == "en" for s in spans)


def test_a_mark_needs_no_fallback_lang_and_refuses_a_bad_attribute_name():
    assert render("Text.\n", {}, mark=lambda seg, reason: {"class": "x"}).markdown == '<span class="x">Text.</span>\n'
    assert render("Text.\n", {}, mark=lambda seg, reason: {}).markdown == "Text.\n"
    with pytest.raises(ValueError, match="use a lower-case HTML attribute name"):
        render("Text.\n", {}, mark=lambda seg, reason: {"onclick x": "y"})


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_code_includes_and_heading_ids_are_never_altered(page):
    source = page.read_text(encoding="utf-8")
    translated = render(source, {s.msgid: pseudo(s.msgid) for s in segment(source)}).markdown

    def untranslatable(text: str) -> list[str]:
        # What the engine renders as code (every <pre>, highlighted or not) and every
        # include line, with its exact content.
        soup = BeautifulSoup(_CURRENT["engine"].convert(text, without=("pymdownx.snippets",)), "html.parser")
        return [pre.get_text() for pre in soup.find_all("pre")] + [line for line in text.splitlines() if "--8<--" in line]

    assert untranslatable(translated) == untranslatable(source)
    assert re.findall(r"\{ ?#[\w-]+ ?\}", source) == [m for m in re.findall(r"\{ ?#[\w-]+ ?\}", translated)
                                                         if m in re.findall(r"\{ ?#[\w-]+ ?\}", source)]

    def heading_ids(text: str) -> list[str]:
        soup = BeautifulSoup(_CURRENT["engine"].convert(text, without=("pymdownx.snippets",)), "html.parser")
        return [h["id"] for h in soup.find_all(re.compile(r"^h[1-6]$"))]

    assert heading_ids(translated) == heading_ids(source)  # headings without an id keep the English one


def test_every_page_yields_messages_for_headings_paragraphs_and_items():
    kinds = {s.kind for p in PAGES for s in segment(p.read_text(encoding="utf-8"))}
    assert {"heading", "paragraph", "list item", "table cell", "table header", "details title",
            "note title", "tab title", "footnote", "quote", "quiz option"} <= kinds


def test_code_and_includes_are_not_messages():
    source = (ROOT / "docs" / "ddp-basics.md").read_text(encoding="utf-8")
    msgids = [s.msgid for s in segment(source)]
    assert not any("--8<--" in m or "def setup" in m for m in msgids)
    assert "DistributedDataParallel basics" in msgids  # heading text without its { #id }


def test_reflowing_a_paragraph_keeps_its_message():
    one = "A paragraph that is\nwrapped here and\nthere.\n"
    other = "A paragraph that is wrapped\nhere and there.\n"
    assert [s.msgid for s in segment(one)] == [s.msgid for s in segment(other)] == ["A paragraph that is wrapped here and there."]


def test_hard_breaks_are_kept_in_the_message_and_the_rendering():
    assert normalize_inline("first  \nsecond") == "first\nsecond"
    source = "- item line  \n  next line\n"
    (seg,) = segment(source)
    assert seg.msgid == "item line\nnext line"
    out = render(source, {seg.msgid: "ligne\nsuivante"}).markdown
    assert out == "- ligne  \n  suivante\n"


def test_missing_messages_fall_back_to_english():
    source = "# Title { #title }\n\nFirst paragraph.\n\nSecond paragraph.\n"
    result = render(source, {"Title": "Titre", "First paragraph.": "Premier paragraphe."})
    assert result.markdown == "# Titre { #title }\n\nPremier paragraphe.\n\nSecond paragraph.\n"
    assert result.missing == ["Second paragraph."]
    assert (result.total, result.translated) == (3, 2)


def test_a_rejected_translation_falls_back_to_english():
    source = "Some text.\n"
    result = render(source, {"Some text.": "<script>x</script>"}, accept=lambda seg, s: "adds HTML" if "<" in s else None)
    assert result.markdown == source
    assert result.rejected == [("Some text.", "adds HTML")]


def test_quiz_markers_stay_out_of_messages_and_survive_translation():
    source = "/// details | Q?\n    type: quiz\n\n- [ ] Wrong.\n- [x] Right.\n\nWhy.\n///\n"
    segments = segment(source)
    assert [(s.kind, s.msgid) for s in segments] == [
        ("details title", "Q?"), ("quiz option", "Wrong."), ("quiz option", "Right."), ("paragraph", "Why.")]
    out = render(source, {"Q?": "F?", "Wrong.": "Faux.", "Right.": "Juste.", "Why.": "Pourquoi."}).markdown
    assert out == "/// details | F?\n    type: quiz\n\n- [ ] Faux.\n- [x] Juste.\n\nPourquoi.\n///\n"
