"""A differential fuzzer of the translation engine against the site's own Markdown engine.

:func:`documents` is a Hypothesis strategy that composes random pages from a grammar of
the constructs Material for MkDocs and pymdown-extensions document: admonitions and
details in both syntaxes, content tabs, pymdownx.blocks (with titles and with
arguments), annotations, attribute lists, footnotes, definition lists, task lists,
tables, abbreviations, snippet notation, fenced code with options, nested lists, block
quotes, callouts, callouts nested two deep, callouts in block quotes (nested, in list
items), bodies indented with tabs, untitled callouts (default titles), headings
ending in an icon with an attribute list, raw HTML blocks (with and without ``markdown``), front matter, hard
breaks and reference links. :func:`check` holds each page to four properties:

(a) an empty catalog gives back the exact bytes;
(b) a catalog mapping every msgid to itself gives back the exact bytes;
(c) a pseudo-translation of every message (:func:`pseudo`: accented vowels; code
    spans, link targets, HTML, entities and attribute lists kept) renders, with the
    real engine, to the same element tree as the English apart from text;
(d) every prose word of the English rendering appears in some message.

Used by ``tests/unit/test_fuzz_segment.py`` (seeded, derandomized, bounded) and by
``course bench --only fuzz-segment`` (20,000 pages or more). Needs the ``test`` extra
(Hypothesis, Beautiful Soup).
"""
from __future__ import annotations

import re

from bs4 import BeautifulSoup
from hypothesis import strategies as st

from .markdown_engine import DEFAULT_ENGINE, MarkdownEngine
from .render import render
from .segment import segment

__all__ = ["check", "documents", "pseudo", "structure", "prose_words", "quoted_callouts", "tab_indented"]

# Markup a translation carries over untouched: code spans, link and footnote targets,
# reference labels, HTML tags, entities, attribute lists and emoji/icon shortcodes
# (pymdownx/emoji.py, RE_EMOJI).
_PROTECTED = re.compile(r"(`+[^`]*`+|\]\([^)]*\)|\]\[[^\]]*\]|\[\^[^\]]+\]|<[^>]+>|&\w+;|\{[^}]*\}|:[+\-\w]+:)")
_ACCENTS = str.maketrans("aeiouyAEIOUYcnsz", "áéíóúýÁÉÍÓÚÝçñšž")


def pseudo(msgid: str) -> str:
    """A pseudo-translation: vowels and a few consonants accented, protected markup kept."""
    parts = _PROTECTED.split(msgid)
    return "".join(part if i % 2 else part.translate(_ACCENTS) for i, part in enumerate(parts))


_KEPT_VALUES = ("class", "id", "href", "src", "type", "for", "name", "open", "checked", "data-tabs", "data-alert")


def structure(html: str) -> list[tuple[str, tuple]]:
    """The element tree as ``(tag, ((attribute, value) …))`` in document order; values of
    text-like attributes (``title``, ``alt``) left out, as they are translated text."""
    soup = BeautifulSoup(html, "html.parser")
    out = []
    for tag in soup.find_all(True):
        attrs = tuple(sorted((k, " ".join(v) if isinstance(v, list) else v) if k in _KEPT_VALUES else (k, "")
                             for k, v in tag.attrs.items()))
        out.append((tag.name, attrs))
    return out


_WORD = re.compile(r"[^\W\d_]{2,}")
# Text the engine writes itself (default titles of containers, footnote back-references)
# or that belongs to code (a fence's title="…" line, never a message).
_GENERATED = ("admonition-title", "footnote-backref", "headerlink", "filename")


def prose_words(html: str) -> set[str]:
    """Words of the rendered text outside code, raw HTML and text the engine generates."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup.find_all(["pre", "code", "script", "style"]):
        tag.decompose()
    for tag in soup.find_all(class_=lambda c: c and any(g in c.split() for g in _GENERATED)):
        tag.decompose()
    for tag in soup.find_all(["summary", "label"]):
        tag.decompose()  # titles: checked as messages where they are titles
    return {w.lower() for w in _WORD.findall(soup.get_text(" "))}


def check(markdown: str, engine: MarkdownEngine = DEFAULT_ENGINE, raw_words: frozenset[str] = frozenset()) -> None:
    """Hold one page to properties (a)-(d); raise ``AssertionError`` naming the one that
    fails.

    Args:
        markdown: the English page.
        engine: the site's engine (default: :data:`DEFAULT_ENGINE`).
        raw_words: words that only occur in raw HTML, code or snippet notation (not
            prose), left out of property (d).
    """
    segments = segment(markdown, engine)
    assert render(markdown, {}, engine=engine).markdown == markdown, "(a) an empty catalog changed the bytes"
    same = {s.msgid: s.msgid for s in segments}
    assert render(markdown, same, engine=engine).markdown == markdown, "(b) msgid -> itself changed the bytes"
    translated = render(markdown, {s.msgid: pseudo(s.msgid) for s in segments}, engine=engine).markdown
    english_html = _page_html(markdown, engine)
    assert structure(_page_html(translated, engine)) == structure(english_html), \
        "(c) the pseudo-translation changed the element tree"
    words = set()
    for s in segments:
        words |= {w.lower() for w in _WORD.findall(s.msgid)}
    missing = prose_words(english_html) - words - raw_words
    assert not missing, f"(d) prose words in no message: {sorted(missing)}"


def _page_html(markdown: str, engine: MarkdownEngine) -> str:
    """What MkDocs renders a page to: front matter taken off (``mkdocs.utils.meta``), then
    the engine."""
    from mkdocs.utils.meta import get_data

    return engine.convert(get_data(markdown)[0])


# ---- the grammar -------------------------------------------------------------------

_VOCAB = ("alpha", "beta", "gamma", "delta", "omega", "rank", "world", "shard", "tensor", "batch", "model",
          "node", "group", "train", "epoch", "layer", "sync", "state", "value", "order")
RAW_WORDS = frozenset({"raw", "cell", "snip", "txt", "missing", "file", "kbd", "result", "grid", "cards", "div",
                       "start", "end", "name", "print", "echo", "code", "py", "sh", "title", "hl", "lines",
                       "linenums", "annotate", "open", "true", "false", "type", "danger", "example", "note", "tip",
                       "warning", "info", "inline", "html", "class", "part", "figure", "caption", "define", "abbr",
                       "details", "tab", "first"})
_word = st.sampled_from(_VOCAB)
_ABBR = ("HTML", "CSS", "XML")


@st.composite
def _inline(draw, allow_refs: bool = True) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(("w", "w", "w", "w", "code", "em", "strong", "link", "ref", "fn", "kbd", "abbr", "ent")))
        w = draw(_word)
        if kind == "code":
            parts.append(f"`{w}()`")
        elif kind == "em":
            parts.append(f"*{w}*")
        elif kind == "strong":
            parts.append(f"**{w}**")
        elif kind == "link":
            parts.append(f"[{w}](https://example.org/{w})")
        elif kind == "ref" and allow_refs:
            parts.append(f"[{w}][r1]")
        elif kind == "fn" and allow_refs:
            parts.append(f"{w}[^1]")
        elif kind == "kbd":
            parts.append(f"<kbd>{w}</kbd>")
        elif kind == "abbr":
            parts.append(draw(st.sampled_from(_ABBR)))
        elif kind == "ent":
            parts.append(f"{w} &amp;")
        else:
            parts.append(w)
    return " ".join(parts)


@st.composite
def _paragraph(draw, indent: str = "") -> str:
    lines = [draw(_inline()) for _ in range(draw(st.integers(1, 3)))]
    if len(lines) > 1 and draw(st.booleans()):
        lines[0] += "  "  # a hard break
    if draw(st.integers(0, 5)) == 0:
        lines.append(draw(st.sampled_from(("{ .annotate }", "{: .note }", "{ #para-id }"))))
    return "\n".join(indent + line for line in lines)


@st.composite
def _heading(draw) -> str:
    level = draw(st.integers(1, 4))
    text = draw(_inline(allow_refs=False))
    attrs = draw(st.sampled_from(("", "", "", " { #own-id }", " { .cls }")))
    return f"{'#' * level} {text}{attrs}"


@st.composite
def _fence(draw, indent: str = "") -> str:
    opener = draw(st.sampled_from(("```", "```py", '```py title="train.py"', '``` py hl_lines="1"', "~~~sh", "````md")))
    body = draw(st.sampled_from(("print(value)", "echo rank\n\necho world", '=== "Inner"\n    text', "- not a list")))
    fence = opener[:4] if opener.startswith("````") else opener[:3]
    return "\n".join(indent + line if line else line for line in [opener, *body.split("\n"), fence])


@st.composite
def _list(draw, indent: str = "", depth: int = 0) -> str:
    ordered = draw(st.booleans())
    task = not ordered and draw(st.integers(0, 3)) == 0
    items = []
    for n in range(draw(st.integers(1, 3))):
        marker = f"{n + 1}." if ordered else "-"
        head = f"{indent}{marker} " + ("[x] " if task and n == 0 else "[ ] " if task else "") + draw(_inline())
        item = [head]
        extra = draw(st.integers(0, 5))
        if extra == 1:
            item.append("")
            item.append(draw(_paragraph(indent + "    ")))
        elif extra == 2 and depth < 1:
            item.append(draw(_list(indent + "    ", depth + 1)))
        elif extra == 3:
            item.append("")
            item.append(draw(_fence(indent + "    ")))
        items.append("\n".join(item))
    # Items are tight only when none has a nested block: Python-Markdown reads an
    # unindented line right after an item's indented block as more of that block's text
    # (ListIndentProcessor's looseDetab), which authors see and avoid.
    tight = all("\n" not in item for item in items) and draw(st.booleans())
    return ("\n" if tight else "\n\n").join(items)


def _indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line.strip() else "" for line in text.split("\n"))


@st.composite
def _body(draw, depth: int) -> str:
    blocks = [draw(_block(depth + 1)) for _ in range(draw(st.integers(1, 2)))]
    return "\n\n".join(blocks)


@st.composite
def _container(draw, depth: int) -> str:
    kind = draw(st.sampled_from(("admonition", "details", "tabs", "block", "block-arg", "definition", "footnote",
                                 "quote", "callout", "html-md")))
    title = draw(_inline(allow_refs=False))
    if kind == "admonition":
        head = draw(st.sampled_from(('!!! note "{t}"', "!!! tip", '!!! warning inline end "{t}"', '!!! info ""')))
        return head.format(t=title) + "\n" + _indent(draw(_body(depth)))
    if kind == "details":
        head = draw(st.sampled_from(('??? note "{t}"', '???+ example "{t}"', "??? tip")))
        return head.format(t=title) + "\n" + _indent(draw(_body(depth)))
    if kind == "tabs":
        tabs = []
        for n in range(draw(st.integers(1, 3))):
            marker = draw(st.sampled_from(("===", "===", "===+", "===!"))) if n == 0 else "==="
            tabs.append(f'{marker} "{draw(_inline(allow_refs=False))}"\n\n' + _indent(draw(_body(depth))))
        return "\n\n".join(tabs)
    if kind == "block":
        name = draw(st.sampled_from(("note", "warning", "details", "tab", "admonition", "tip")))
        options = draw(st.sampled_from(("", "\n    type: danger", "\n    open: true"))) if name == "details" else ""
        return f"/// {name} | {title}{options}\n\n{draw(_body(depth))}\n///"
    if kind == "block-arg":
        head = draw(st.sampled_from(("/// html | div.result", "/// html | div", "/// fancylists | type=a",
                                     "/// define")))
        if head == "/// define":
            return f"{head}\n{draw(_word)}\n\n- {draw(_inline())}\n///"
        if "fancylists" in head:
            return f"{head}\n1. {draw(_inline())}\n2. {draw(_inline())}\n///"
        return f"{head}\n\n{draw(_body(depth))}\n///"
    if kind == "definition":
        term = draw(_inline(allow_refs=False))
        first = draw(st.sampled_from(("text", "text", "admonition")))
        if first == "admonition":
            dd = ":   !!! note\n" + _indent(draw(_paragraph()), "        ")
        else:
            dd = f":   {draw(_inline())}"
        more = "\n\n" + _indent(draw(_paragraph())) if draw(st.booleans()) else ""
        return f"{term}\n{dd}{more}"
    if kind == "footnote":
        more = "\n\n" + _indent(draw(_paragraph())) if draw(st.booleans()) else ""
        return f"See {draw(_word)}[^1].\n\n[^1]: {draw(_inline(allow_refs=False))}{more}"
    if kind == "quote":
        inner = draw(st.one_of(_paragraph(), _list()))
        return "\n".join("> " + line if line else ">" for line in inner.split("\n"))
    if kind == "callout":
        head = draw(st.sampled_from(("> [!note]", "> [!tip] {t}", "> [!warning]+ {t}")))
        inner = draw(_paragraph())
        return head.format(t=title) + "\n" + "\n".join("> " + line for line in inner.split("\n"))
    # md_in_html: a grid of cards, its Markdown parsed
    return f'<div class="grid cards" markdown>\n\n{draw(_body(depth))}\n\n</div>'


@st.composite
def _nested_callout(draw) -> str:
    """A callout in a callout, two levels, old-style (indented) or pymdownx.blocks (the
    outer fence longer), titled or not, bodies of several paragraphs."""
    def paragraphs(indent: str) -> str:
        return "\n\n".join(draw(_paragraph(indent)) for _ in range(draw(st.integers(1, 3))))

    inner_title = draw(st.sampled_from(("", ' "{t}"'))).format(t=draw(_inline(allow_refs=False)))
    outer_title = draw(st.sampled_from(("", ' "{t}"'))).format(t=draw(_inline(allow_refs=False)))
    if draw(st.booleans()):
        inner = draw(st.sampled_from(("!!! tip", "??? warning", "???+ example"))) + inner_title
        outer = draw(st.sampled_from(("!!! note", "??? note", "???+ info"))) + outer_title
        before = paragraphs("    ") + "\n\n" if draw(st.booleans()) else ""
        after = "\n\n" + paragraphs("    ") if draw(st.booleans()) else ""
        return f"{outer}\n{before}    {inner}\n{paragraphs('        ')}{after}"
    inner = draw(st.sampled_from(("/// tip", "/// warning", "/// details"))) + inner_title.replace(' "', " | ").rstrip('"')
    outer = draw(st.sampled_from(("//// note", "//// info", "//// details"))) + outer_title.replace(' "', " | ").rstrip('"')
    return f"{outer}\n\n{paragraphs('')}\n\n{inner}\n\n{paragraphs('')}\n///\n\n{paragraphs('')}\n////"


@st.composite
def _untitled_callout(draw) -> str:
    """A callout showing its default title ("Note"), or explicitly none (``!!! note ""``)."""
    head = draw(st.sampled_from(("!!! note", "??? warning", "???+ tip", '!!! note ""', "!!! danger inline end",
                                 "/// note", "/// details\n    type: warning\n", "/// note |", "> [!tip]", "> [!note]+")))
    body = draw(_paragraph())
    if head.startswith(">"):
        return head + "\n" + "\n".join("> " + line for line in body.split("\n"))
    if head.startswith("///"):
        return f"{head}\n{body}\n///"
    return head + "\n" + _indent(body)


def _quote(text: str, by: str = "> ") -> str:
    return "\n".join(by + line if line else by.rstrip() for line in text.split("\n"))


@st.composite
def quoted_callouts(draw) -> str:
    """Callouts in block quotes, as Python-Markdown reads them (``[ ]{0,3}>[ ]?`` a level,
    then the containers): old-style, blocks and ``> [!note]`` callouts, nested, untitled;
    quotes in quotes, a quote in a list item, a quote whose marker a tab follows."""
    inner = draw(st.one_of(_nested_callout(), _untitled_callout(), _container(1)))
    form = draw(st.sampled_from(("quote", "quote", "nested", "list", "after-para")))
    if form == "nested":
        return _quote(_quote(inner))
    if form == "list":
        return f"- {draw(_inline())}\n\n" + _indent(_quote(inner))
    if form == "after-para":
        return f"{draw(_paragraph())}\n" + _quote(inner)
    return _quote(inner)


@st.composite
def tab_indented(draw) -> str:
    """Container bodies indented with tabs (Python-Markdown expands every tab to 4
    columns first, markdown/core.py): each 4-space step of a line's indent a tab or not."""
    text = draw(st.one_of(_nested_callout(), _untitled_callout(), _container(1), _list()))
    out = []
    for line in text.split("\n"):
        spaces = len(line) - len(line.lstrip(" "))
        steps = "".join(draw(st.sampled_from(("\t", "    "))) for _ in range(spaces // 4))
        out.append(steps + line[spaces // 4 * 4:])
    return "\n".join(out)


@st.composite
def _icon_heading(draw) -> str:
    """A heading ending in an icon shortcode with an attribute list, as Material's docs
    write it (the list touching the icon is the icon's; one after a space the heading's)."""
    icon = draw(st.sampled_from((":octicons-heart-fill-16:{: .heart-throb}", ":material-star:{ .cls }",
                                 ":material-star:{ .cls } { #own-id }", ":material-star:{ .cls } {: .big }")))
    return f"{'#' * draw(st.integers(1, 4))} {draw(_inline(allow_refs=False))} {icon}"


@st.composite
def _table(draw) -> str:
    cols = draw(st.integers(1, 3))
    rows = [" | ".join(draw(_inline(allow_refs=False)).replace("|", "") for _ in range(cols))
            for _ in range(draw(st.integers(1, 3)))]
    header = " | ".join(draw(_word).title() for _ in range(cols))
    return "\n".join([f"| {header} |", "|" + "---|" * cols] + [f"| {r} |" for r in rows])


@st.composite
def _markdown_in_html(draw, depth: int) -> str:
    """md_in_html as Material's docs write it: ``markdown``, ``="1"``, ``="block"``, nested,
    tags on the content's own lines, ``<details markdown>`` with a ``<summary>``."""
    attr = draw(st.sampled_from(("markdown", 'markdown="1"', 'markdown="block"', 'class="grid" markdown')))
    body = draw(_body(depth)) if depth < 2 else draw(_paragraph())
    form = draw(st.sampled_from(("tight", "nested", "details", "span")))
    if form == "nested":
        return f"<div {attr}>\n<div markdown>\n{draw(_paragraph())}\n</div>\n\n{body}\n</div>"
    if form == "details":
        return f"<details markdown>\n<summary markdown>{draw(_inline(allow_refs=False))}</summary>\n\n{body}\n</details>"
    if form == "span":
        return f"<p markdown>{draw(_inline(allow_refs=False))}</p>"
    return f"<div {attr}>\n{body}\n</div>"


@st.composite
def _html_between(draw) -> str:
    """Comments and raw HTML between prose paragraphs, with and without blank lines."""
    html = draw(st.sampled_from(("<!-- raw -->", "<!--\nraw raw\n-->", "<div>raw</div>", '<div class="x">\nraw\n\nraw\n</div>')))
    sep = draw(st.sampled_from(("\n", "\n\n")))
    return f"{draw(_paragraph())}{sep}{html}{sep}{draw(_paragraph())}"


@st.composite
def _list_forms(draw) -> str:
    """Lists written every way CommonMark and Python-Markdown allow: 2- and 3-space
    nesting, ``1)`` markers, lazy lines, an indented continuation, a list right under a
    paragraph."""
    w = lambda: draw(_inline(allow_refs=False))  # noqa: E731
    form = draw(st.sampled_from(("two", "three", "paren", "lazy", "continued", "under", "under-ol")))
    if form == "two":
        return f"- {w()}\n  - {w()}\n  - {w()}\n- {w()}"
    if form == "three":
        return f"1. {w()}\n   1. {w()}\n2. {w()}"
    if form == "paren":
        return f"1) {w()}\n2) {w()}"
    if form == "lazy":
        return f"- {w()}\n{w()}\n- {w()}"
    if form == "continued":
        return f"- {w()}\n\n{draw(st.sampled_from(('  ', '    ')))}{w()}\n- {w()}"
    # no "word:" first line: MkDocs would read it as MultiMarkdown meta-data at a page's start
    return f"{w()} as follows\n" + ("- {}\n- {}" if form == "under" else "1. {}\n2. {}").format(w(), w())


@st.composite
def _block(draw, depth: int = 0) -> str:
    choices = ["paragraph", "paragraph", "heading", "list", "fence", "table", "snippet", "abbr", "raw", "hr",
               "annotated", "marker", "html-between", "list-forms", "markdown-in-html"]
    if depth < 2:
        choices += ["container", "container", "container", "untitled-callout"]
    if depth == 0:
        choices += ["nested-callout", "icon-heading", "quoted-callout", "tab-indented"]
    kind = draw(st.sampled_from(choices))
    if kind == "paragraph":
        return draw(_paragraph())
    if kind == "heading":
        return draw(_heading())
    if kind == "list":
        return draw(_list())
    if kind == "fence":
        return draw(_fence())
    if kind == "table":
        return draw(_table())
    if kind == "snippet":
        return draw(st.sampled_from(('--8<-- "missing-snip.txt"', "--8<--\nmissing-snip.txt\n--8<--")))
    if kind == "abbr":
        return f"*[{draw(st.sampled_from(_ABBR))}]: {draw(_word).title()} {draw(_word)}"
    if kind == "raw":
        return draw(st.sampled_from(("<table><tr><td>raw cell</td></tr></table>", "<div>\nraw\n</div>")))
    if kind == "hr":
        return "***"
    if kind == "annotated":
        return f"{draw(_inline())} (1)\n{{ .annotate }}\n\n1.  {draw(_inline())}"
    if kind == "nested-callout":
        return draw(_nested_callout())
    if kind == "untitled-callout":
        return draw(_untitled_callout())
    if kind == "icon-heading":
        return draw(_icon_heading())
    if kind == "quoted-callout":
        return draw(quoted_callouts())
    if kind == "tab-indented":
        return draw(tab_indented())
    if kind == "marker":
        return f"Mark it with `--8<-- [start:name]`.\n{draw(_inline())}"
    if kind == "html-between":
        return draw(_html_between())
    if kind == "list-forms":
        return draw(_list_forms())
    if kind == "markdown-in-html":
        return draw(_markdown_in_html(depth))
    return draw(_container(depth))


@st.composite
def documents(draw) -> str:
    """A random page: optional front matter, blocks, reference definitions."""
    parts = []
    if draw(st.integers(0, 4)) == 0:
        parts.append("---\ntitle: Page\ntags: [a, b]\n---")
    parts += [draw(_block()) for _ in range(draw(st.integers(1, 6)))]
    text = "\n\n".join(parts)
    if "[r1]" in text:
        text += '\n\n[r1]: https://example.org/ref "Ref"'
    if "[^1]" in text and "[^1]:" not in text:
        text += f"\n\n[^1]: {draw(_inline(allow_refs=False))}"
    return text + "\n"
