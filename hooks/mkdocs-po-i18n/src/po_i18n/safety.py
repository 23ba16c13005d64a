"""Translations are untrusted input: accept a msgstr only when it renders to the same
structure as its msgid.

A translation is judged by what it renders to, with the site's own Markdown engine
(:mod:`po_i18n.markdown_engine`: the extensions and options of mkdocs.yml), in the place
its message has on a page, "the block it is": a paragraph, list item, quote, footnote,
table cell or header, heading, or a block, admonition or tab title (chosen from the
message's kind; an unknown kind is rendered as a paragraph). The msgid and the msgstr
are rendered the same way, with the page's own link reference definitions, followed by
the closers of every HTML construct that can stay open across blocks (:data:`_CLOSERS`:
a message that opens a comment renders as text alone, but hides the page up to a later
message's ``-->``), and their
element skeletons (:mod:`po_i18n.skeleton`) must be equal: the same elements with the
same attributes and values, nested the same way, text aside, inline elements in any
order. This is the allowlist approach of HTML sanitizers such as ammonia and bleach:
what may appear is what the English has; nothing is searched for.

Two things a skeleton holds are compared as a reader sees them. Code (inline code and
code blocks) is part of the skeleton character for character: inline code may differ
only in runs of the white space a browser collapses (a code span the msgid wraps over a
line), so another space (U+3000 from a Japanese IME, a no-break space) or a homoglyph is
refused, the reason naming the characters (``U+0430 CYRILLIC SMALL LETTER A where the
msgid has U+0061 LATIN SMALL LETTER A``). And the text the rendering shows (entities
decoded, ``alt`` and ``title`` values included: :attr:`po_i18n.skeleton.Skeleton.shown`)
may show each hidden character (:mod:`po_i18n.invisible`: bidirectional controls,
format, control, private-use and unassigned characters, default-ignorables) at most as
often as the msgid's does: a right-to-left override keeps every element and reverses what
the reader sees. For a table cell, whose probe sits between cells of the checker's own,
reasons name only what the translator wrote (:func:`_cell_differences`).

Three things a rendering of one message cannot show are checked first, line by line
(lines as Python-Markdown splits them: ``\\r\\n``, ``\\r`` or ``\\n``):

* size: a msgstr may be at most :data:`GROWTH` times its msgid plus :data:`SLACK`
  characters, and may have at most :data:`EXTRA_BRACKETS` more ``[`` than its msgid
  (each unmatched one costs a scan of the rest of the text), so the work of judging
  it stays linear in its size;
* control characters: none but the line feed (nor Unicode line and paragraph
  separators, where ``str.splitlines`` breaks lines);
* block syntax: a line that starts (after spaces) with what an extension reads as a
  line of syntax, such as an include line (pymdownx.snippets reads ``--8<--`` lines
  before any Markdown is parsed, so a rendering without it cannot see them), a block
  fence, a heading, list or quote marker, an attribute list, a reference definition,
  or an empty line, is allowed only where the msgid has the identical line. A mention
  of such syntax inside a line (in a code span, say) is not a line of syntax.

Messages shown in HTML templates rather than rendered as Markdown (the site name, the
404 page: kind :data:`PLAIN_TEXT`) must not add ``<``, ``>``, ``&`` or ``"``: MkDocs's
templates do not escape them; nor hidden characters.

Used by the build (:meth:`PageCheck.accept`, the ``accept`` callback of
:func:`po_i18n.render.render`; a refused translation renders in English), by
``po-i18n check`` and the build's warnings (:func:`po_i18n.check.check_catalog`), and by
the status page and ``po-i18n stats`` (a refused translation counts as untranslated).
"""
from __future__ import annotations

import difflib
import functools
import re
from collections import Counter
from collections.abc import Iterable

import markdown
from markdown.extensions.abbr import AbbrExtension
from markdown.extensions.footnotes import FootnoteExtension

from . import invisible, verdicts
from .includes import included
from .markdown_engine import MarkdownEngine
from .render import _splice
from .skeleton import Element, Skeleton, first_difference, skeleton

__all__ = ["DEFAULT_KIND", "EXTRA_BRACKETS", "GROWTH", "PLAIN_TEXT", "SLACK", "PageCheck", "TranslationCheck", "check_for",
           "clear_caches", "difference", "size_limit"]

DEFAULT_KIND = "paragraph"
PLAIN_TEXT = "plain text"

# The size bound. Measured over the course's catalogs (453 translated messages per
# language): the largest msgstr/msgid length ratio is 2.80 in ru, 1.38 in ja, 4.20 in tr
# and 2.80 in sv, each on a one-word msgid ("Suits" became 21 characters in Turkish,
# 16 more than the English); over msgids of 40 characters or more it is at most 1.74
# (tr). Three times the msgid plus 40 characters leaves 1.7x headroom over the longest
# growth of a sentence and lets a 5-character label become 55 characters, more than
# the +200 % that localization guidelines (IBM's) plan for strings under ten
# characters, so languages that grow more than these four (German, Finnish) still fit;
# a pasted page or a padded attack (20,000 characters for 25) does not.
GROWTH = 3
SLACK = 40


# The work bound. Python-Markdown's link and image patterns
# (markdown.inlinepatterns.LinkInlineProcessor.getText) scan from every "[" for its
# matching "]", so rendering a text of n characters with k unmatched "[" costs k x n: a
# 6,000-character msgstr of "[" repeated (within the size bound of a 2,000-character
# msgid; the course's longest is 1,841) took 9 s per rendering, and it is rendered
# several times. No translation of the course adds a single "[" to its msgid's (ru, ja,
# tr, sv, measured); a few more are allowed for a translator's own brackets.
EXTRA_BRACKETS = 8


def size_limit(msgid: str) -> int:
    """The longest msgstr (in characters) accepted for a msgid."""
    return GROWTH * len(msgid) + SLACK


# Python-Markdown splits the source into lines at \r\n, \r and \n (markdown.core.Markdown.convert).
_LINE = re.compile(r"\r\n|\r|\n")
# Lines the extensions read as syntax of their own, matched after leading spaces and tabs:
# pymdownx.snippets (RE_ALL_SNIPPETS: ";" escapes, any run of "-" around "8<"), pymdownx.blocks
# ("///"), admonition / details / tabbed ("!!!", "???", "==="), fenced code, Python-Markdown's
# headings, setext underlines and rules, lists, quotes, attr_list's block form, reference,
# footnote and abbreviation definitions, and table rows.
_SYNTAX = (
    ("an include line (--8<--)", re.compile(r";*-+8<-+")),
    ("a block fence", re.compile(r"/{3,}|!{3}|\?{3}|={3}|`{3,}|~{3,}")),
    ("a heading", re.compile(r"#{1,6}(?:[ \t]|$)")),
    ("a heading underline or rule", re.compile(r"(?:=+|-+|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})[ \t]*$")),
    ("a list item", re.compile(r"(?:[-+*]|\d+[.)])(?:[ \t]|$)")),
    ("a quote", re.compile(r">")),
    ("an attribute list", re.compile(r"\{.*\}[ \t]*$")),
    ("a definition", re.compile(r"\*?\[[^\]]*\]:")),
    ("a table row", re.compile(r"\|")),
)
_FENCE_MARKERS = ("///", "!!!", "???", "===")
# What comes after a message in every probe: the closers of the HTML constructs that Python's
# html.parser (which Python-Markdown's raw-HTML preprocessor, markdown.htmlparser, runs over the
# whole page before any block is parsed) keeps open across lines and blank lines until they
# end: a comment until "-->" or "--!>", a CDATA section until "]]>", a processing
# instruction or declaration until ">", a start tag's quoted attribute until its quote. A
# msgstr that leaves one of them open renders as text on its own, but would swallow the page
# up to a closer in a later message (two messages "<!-->" hide all between them); with the
# closers after it, the open construct shows in the probe's own rendering.
_CLOSERS = "\n\nz \"' --> --!> ]]> ?> >\n\nz\n"
_HTML_SPECIAL = "<>&\""
_CONTROL_NAMES = {"\r": "carriage return", "\t": "tab", "\x00": "NUL", "\x0b": "vertical tab", "\x0c": "form feed",
                  "\x1b": "escape", "\x7f": "delete", "\x85": "next line", "\u2028": "line separator",
                  "\u2029": "paragraph separator"}
_TICKS = re.compile(r"`+")
# Unicode's Cc (U+0000-U+001F, U+007F-U+009F) but the line feed: Python-Markdown reads \r as a
# line break the renderer does not lay out; Zl and Zp (U+2028, U+2029): str.splitlines(),
# which the hooks' line scanners use (po_i18n.gate), breaks lines there.
_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_MAX_REASONS = 5  # structural differences named in one line; the rest are counted
_MAX_HIDDEN = 3  # hidden characters named in one line; the rest are counted


class TranslationCheck:
    """The check of one site: its Markdown engine, and what it has judged (memoised).

    Args:
        engine: the site's :class:`po_i18n.markdown_engine.MarkdownEngine`, from
            ``engine_for(mkdocs_yml)`` (``Project.engine``, which a build uses too) or
            ``engine_of(config)``.
    """

    def __init__(self, engine: MarkdownEngine) -> None:
        self.engine = engine
        self._probe = _probe_engine(engine)

    def page(self, english: str = "") -> "PageCheck":
        """The check of the messages of one English page (its Markdown source, str); the
        page's link reference, footnote and abbreviation definitions are part of every
        rendering. ``""`` for messages that belong to no page (``_site.po``)."""
        return PageCheck(self._probe, _definitions(self.engine, english.rstrip("\n")))  # a final newline defines nothing

    def problems(self, msgid: str, msgstr: str, kinds: Iterable[str] = (DEFAULT_KIND,)) -> list[str]:
        """:meth:`PageCheck.problems` for a message of no page."""
        return self.page().problems(msgid, msgstr, kinds)


class PageCheck:
    """Judges the translations of one page's messages; build with :meth:`TranslationCheck.page`."""

    def __init__(self, engine: MarkdownEngine, definitions: tuple) -> None:
        self._engine, self._definitions = engine, definitions

    def problems(self, msgid: str, msgstr: str, kinds: Iterable[str] = (DEFAULT_KIND,)) -> list[str]:
        """Every reason a translation cannot be used, as short phrases.

        Args:
            msgid: the English message (inline Markdown, hard breaks as ``"\\n"``).
            msgstr: its translation (non-empty).
            kinds: the kinds the message has on its page (``"heading"``, ``"table
                cell"``, ``"note title"``, … as :class:`po_i18n.segment.Segment`
                names them); it is judged as each.

        Returns:
            An empty list when the translation is accepted; else one phrase per
            problem, e.g. ``"inline code `RANK` missing or changed"``. Never raises:
            a translation the engine cannot render is refused, with the error.
        """
        found: list[str] = []
        for kind in dict.fromkeys(kinds or (DEFAULT_KIND,)):
            for reason in _judge(self._engine, self._definitions, kind, msgid, msgstr):
                if reason not in found:
                    found.append(reason)
        return found

    def accept(self, segment, msgstr: str) -> str | None:
        """The ``accept`` callback of :func:`po_i18n.render.render`: ``None`` when the
        translation of ``segment`` (a :class:`po_i18n.segment.Segment`) is accepted,
        else its problems joined by ``"; "``."""
        return "; ".join(self.problems(segment.msgid, msgstr, (segment.kind,))) or None


_checks: dict[MarkdownEngine, TranslationCheck] = {}


def clear_caches() -> None:
    """Forget every judgement and rendering (for measuring the check's cold cost)."""
    _checks.clear()
    for cached in (_judge, _render, _page_definitions, _title_places):
        cached.cache_clear()


def check_for(engine: MarkdownEngine) -> TranslationCheck:
    """The :class:`TranslationCheck` of an engine, one per engine. What it judged is kept
    per rendering engine, so copies of a site that differ only in where their snippets
    live share it; each copy reads its own pages' definitions."""
    check = _checks.get(engine)
    if check is None:
        check = _checks[engine] = TranslationCheck(engine)
    return check


# --- rendering one message as the block it is -------------------------------------------

def _constant_slug(value: str, separator: str) -> str:
    """toc's slugify for probes: an id that does not depend on the heading's text, so a
    heading's generated id is the same in both languages and an id a translation sets
    (``{ #x }``) shows."""
    return "h"


def _probe_engine(engine: MarkdownEngine) -> MarkdownEngine:
    """The engine messages are rendered with: the site's, without pymdownx.snippets
    (rendering a message never reads a file; include lines are refused line by line
    first) and with a heading slug that does not depend on the text."""
    names = tuple(n for n in engine.extensions if n != "pymdownx.snippets")
    configs = {n: c for n, c in engine.configs.items() if n in names}
    return MarkdownEngine(names, configs).configured("toc", slugify=_constant_slug)


_instances: dict[MarkdownEngine, markdown.Markdown] = {}


def _instance(probe: MarkdownEngine) -> markdown.Markdown:
    """One reusable Python-Markdown of an engine (reset before each document)."""
    md = _instances.get(probe)
    if md is None:
        md = _instances[probe] = probe.markdown()
    return md


def _extension(md: markdown.Markdown, kind: type):
    return next((e for e in md.registeredExtensions if isinstance(e, kind)), None)


def _definitions(engine: MarkdownEngine, english: str) -> tuple:
    """The page-wide definitions of an English page, as the site's engine reads them:
    link references (Python-Markdown's ``md.references``), footnotes and abbreviations
    when those extensions are enabled, included files' definitions too. A message of the
    page is rendered with them, so that a translation adding ``[text][label]`` for a
    label the page defines shows a link.

    Every definition has ``]:`` in it; a page without one that includes no file has none,
    and is not rendered. Code is not highlighted here (it cannot define anything).
    """
    snippets = engine.configs.get("pymdownx.snippets", {}) if engine.has("pymdownx.snippets") else None
    includes = snippets is not None and ("8<" in english or snippets.get("auto_append"))
    if "]:" not in english and not includes:
        return ()
    return _page_definitions(engine, english, included(engine, english) if includes else "")


@functools.lru_cache(maxsize=256)
@verdicts.remembered("definitions")
def _page_definitions(engine: MarkdownEngine, english: str, included_digest: str) -> tuple:
    """:func:`_definitions` of a page that may have some; ``included_digest``
    (:func:`po_i18n.includes.included`) is part of the key only."""
    md = _instance(engine.configured("pymdownx.highlight", use_pygments=False))
    md.reset()
    try:
        md.convert(english)
    except Exception:  # noqa: BLE001 - the English page fails the build on its own; judge without definitions
        return ()
    found = [("references", tuple(sorted(md.references.items())))]
    footnotes = _extension(md, FootnoteExtension)
    if footnotes is not None:
        found.append(("footnotes", tuple(footnotes.footnotes.items())))
    abbreviations = _extension(md, AbbrExtension)
    if abbreviations is not None:
        found.append(("abbreviations", tuple(sorted(abbreviations.abbrs.items()))))
    return tuple(found)


@functools.lru_cache(maxsize=1 << 16)
def _render(engine: MarkdownEngine, definitions: tuple, text: str) -> Skeleton | str:
    """The skeleton of ``text`` rendered by the engine with the page's definitions, or the
    error (str) the engine raised."""
    md = _instance(engine)
    md.reset()
    for name, items in definitions:
        if name == "references":
            md.references.update(items)
        elif name == "footnotes":
            _extension(md, FootnoteExtension).footnotes.update(items)
        elif name == "abbreviations":
            _extension(md, AbbrExtension).abbrs.update(items)
    try:
        return skeleton(md.convert(text))
    except Exception as exc:  # noqa: BLE001 - hostile input may break an extension; refuse, never crash
        return f"{type(exc).__name__}: {str(exc).splitlines()[0][:80] if str(exc) else ''}".rstrip(": ")


def _places(engine: MarkdownEngine, definitions: tuple, kind: str, msgid: str, msgstr: str) -> list[tuple[str, str, str]]:
    """How a message of this kind sits in a page: ``(before, after, continuation)``
    around it, one or more (each must give the same skeleton)."""
    k = kind.lower()
    tail = "\n\nz\n"
    if k.endswith(" title"):
        name = (k[: -len(" title")].split() or ["note"])[-1]  # "details title" -> details
        return list(_title_places(engine, name)) or [("", tail, "")]
    if k.startswith("table"):
        # Neighbour cells hold code spans of every backtick length the two sides use:
        # an unpaired backtick pairs with the next cell's and merges the cells
        # (markdown.extensions.tables, TableProcessor._split), which then shows.
        runs = sorted({len(t) for t in _TICKS.findall(msgid + msgstr)} | {1})
        code = " ".join("`" * n + "c" + "`" * n for n in runs)
        if "header" in k:
            return [(f"|{code}|", f"|{code}|\n|-|-|-|\n|x|y|x|{tail}", "")]
        return [(f"|h|h|h|\n|-|-|-|\n|{code}|", f"|{code}|\n|{code}|y|{code}|{tail}", "")]
    if "heading" in k:
        return [("# ", tail, ""), ("# ", " { #probe }" + tail, "")]
    if "quiz" in k or "task" in k:
        return [("- [ ] y\n- [x] ", "\n- [ ] z" + tail, "  ")]
    if "list" in k or k.endswith(" item") or "option" in k:
        return [("- y\n- ", "\n- z" + tail, "  ")]
    if "quote" in k:
        return [("> ", tail, "> ")]
    if "footnote" in k:
        return [("x[^probe]\n\n[^probe]: ", tail, "    ")]
    return [("", tail, "")]


@functools.lru_cache(maxsize=256)
def _title_places(engine: MarkdownEngine, name: str) -> tuple[tuple[str, str, str], ...]:
    """The title syntaxes the engine reads for a container named ``name`` (``"note"``,
    ``"details"``, ``"tab"``): pymdownx.blocks' ``/// name | title`` and the older
    ``!!! name "title"``, ``??? name "title"``, ``=== "title"``; one is kept only when
    the engine really makes a container of it (no fence left in the output)."""
    tail = "\n\nz\n"
    candidates = [(f"/// {name} | ", f"\n\nz\n///\n{tail}", ""),
                  (f'!!! {name} "', f'"\n    z\n{tail}', ""),
                  (f'??? {name} "', f'"\n    z\n{tail}', "")]
    if name == "tab":
        candidates.append(('=== "', f'"\n    z\n{tail}', ""))
    kept = []
    for before, after, continuation in candidates:
        md = _instance(engine)
        md.reset()
        try:
            html = md.convert(before + "T" + after)
        except Exception:  # noqa: BLE001 - a syntax the engine cannot render is not one it uses
            continue
        if not any(marker in html for marker in _FENCE_MARKERS):
            kept.append((before, after, continuation))
    return tuple(kept)


# --- the judgement -----------------------------------------------------------------------

@functools.lru_cache(maxsize=1 << 16)
@verdicts.remembered("judge")
def _judge(engine: MarkdownEngine, definitions: tuple, kind: str, msgid: str, msgstr: str) -> tuple[str, ...]:
    if msgstr == msgid:
        return ()  # the same text renders the same (a code-only cell, a name kept in English)
    limit = size_limit(msgid)
    if len(msgstr) > limit:
        return (f"{len(msgstr)} characters, more than the {limit} allowed for this {len(msgid)}-character msgid "
                f"({GROWTH} x its length + {SLACK}); is something pasted by mistake?",)
    brackets = msgstr.count("[") - msgid.count("[")
    if brackets > EXTRA_BRACKETS:
        return (f"has {brackets} more [ than the msgid (at most {EXTRA_BRACKETS} more are accepted: each one makes "
                "the Markdown link parser read the rest of the text again); keep the msgid's brackets",)
    control = next((m.group() for m in _CONTROL.finditer(msgstr) if m.group() not in msgid), None)
    if control is not None:
        name = _CONTROL_NAMES.get(control, "a control character")
        return (f"contains U+{ord(control):04X} ({name}); remove it",)
    if kind == PLAIN_TEXT:
        added = Counter(c for c in msgstr if c in _HTML_SPECIAL) - Counter(c for c in msgid if c in _HTML_SPECIAL)
        return tuple(f"adds the HTML character {c!r}, which this string cannot carry (it is shown in HTML as it is); "
                     f"leave it out" for c in sorted(added)) + tuple(_hidden_reasons(msgid, msgstr))
    places = _places(engine, definitions, kind, msgid, msgstr)
    # In a heading, table cell or title the first line follows the block's own syntax on
    # the same line, so only the lines after a hard break can start a block.
    k = kind.lower()
    found = list(_line_problems(msgid, msgstr, first=not (k.endswith(" title") or k.startswith("table") or "heading" in k)))
    for before, after, continuation in places:
        english = _render(engine, definitions, before + _splice(msgid, continuation) + after + _CLOSERS)
        translated = _render(engine, definitions, before + _splice(msgstr, continuation) + after + _CLOSERS)
        if isinstance(translated, str):
            found.append(f"cannot be rendered by the site's Markdown ({translated})")
            break
        if isinstance(english, str):
            continue
        found.extend(r for r in _hidden_reasons(english.shown, translated.shown) if r not in found)
        if english == translated:
            continue
        alone = (_render(engine, definitions, before + _splice(msgid, continuation) + after),
                 _render(engine, definitions, before + _splice(msgstr, continuation) + after))
        if alone[0] == alone[1]:  # the same on its own: what differs is something it leaves open
            found.append("leaves an HTML comment, CDATA section, declaration or quoted tag attribute open "
                         "(such as <!-- or <!--> without -->), which would hide the page up to a later message's "
                         "-->, ]]> or >; close it or leave it out")
            break
        if not isinstance(alone[1], str) and not isinstance(alone[0], str):
            english, translated = alone
        if k.startswith("table"):
            reasons = _cell_differences(engine, definitions, "header" in k, english, translated, msgid, msgstr)
        else:
            reasons = _differences(english, translated, msgid, msgstr)
        found.extend(r for r in reasons if r not in found)
        break
    return tuple(found)


def _hidden_reasons(english: str, translated: str) -> list[str]:
    """One phrase per hidden character (:mod:`po_i18n.invisible`) the translation shows
    more often than the English, naming it; the text each side shows is given."""
    found = []
    for char, mine, theirs in invisible.added(english, translated):
        name = invisible.describe(char)
        found.append(f"shows {name} {mine} times where the msgid shows it {theirs}; remove the extra ones" if theirs
                     else f"adds {name}, {invisible.effect(char)}; remove it")
    if len(found) > _MAX_HIDDEN:
        found[_MAX_HIDDEN:] = [f"and {len(found) - _MAX_HIDDEN} more such characters that the msgid does not have; "
                               "remove them"]
    return found


def _probe_cell(rendering: Skeleton, header: bool) -> Element | None:
    """The cell a table place (:func:`_places`) puts the message in: the middle one of the
    first row of the table's head (``header``) or body; ``None`` when the rendering has no
    such row of three cells."""
    table = next((e for e in rendering.root.children if e.tag == "table"), None)
    part = next((e for e in table.children if e.tag == ("thead" if header else "tbody")), None) if table else None
    row = next((e for e in part.children if e.tag == "tr"), None) if part else None
    cells = [e for e in row.children if e.tag in ("td", "th")] if row else []
    return cells[1] if len(cells) == 3 else None


def _outside(element: Element, cell: Element) -> tuple:
    """:meth:`Element.key` with ``cell`` left out (its place kept)."""
    if element is cell:
        return ("#cell",)
    return (element.tag, element.attrs, element.text, tuple(_outside(child, cell) for child in element.children))


def _cell_differences(engine: MarkdownEngine, definitions: tuple, header: bool, english: Skeleton,
                      translated: Skeleton, msgid: str, msgstr: str) -> list[str]:
    """Why a table cell's translation renders differently, naming only what the translator
    wrote: the neighbour cells of the probe hold code spans of the checker's own, which a
    reason must not name. When all that changed is inside the cell, the cells' contents
    are compared; when the cell spills into its row (a ``|``, a backtick pairing with a
    neighbour's, a final backslash), that is said, with what the translation changes when
    rendered as a paragraph of its own and the usual causes (:func:`_cell_hints`)."""
    cells = _probe_cell(english, header), _probe_cell(translated, header)
    if None not in cells and _outside(english.root, cells[0]) == _outside(translated.root, cells[1]):
        return _differences(Skeleton(Element("#root", children=[cells[0]])),
                            Skeleton(Element("#root", children=[cells[1]])), msgid, msgstr)
    found = ["does not stay in its table cell: the cells of its row change"]
    alone = [_render(engine, definitions, _splice(text, "") + "\n\nz\n" + _CLOSERS) for text in (msgid, msgstr)]
    if not any(isinstance(a, str) for a in alone) and alone[0] != alone[1]:
        found += [r for r in _differences(alone[0], alone[1], msgid, msgstr) if not r.startswith("changes how the markup")]
    return found + _cell_hints(msgid, msgstr)


def _cell_hints(msgid: str, msgstr: str) -> list[str]:
    """What usually moved a table cell's content into its neighbour, in plain words."""
    hints = []
    pipes = (len(re.findall(r"(?<!\\)\|", _TICKS.sub("", text))) for text in (msgid, msgstr))
    if next(pipes) < next(pipes):
        hints.append("adds a | (a cell separator); write \\| for a literal bar")
    if msgstr.rstrip().endswith("\\") and not msgid.rstrip().endswith("\\"):
        hints.append("ends with a backslash, which escapes the | after the cell")
    if any(n % 2 for n in Counter(map(len, _TICKS.findall(msgstr))).values()):
        hints.append("has an unpaired backtick, which pairs with one in another cell")
    return hints


def _line_problems(msgid: str, msgstr: str, first: bool = True):
    """Lines of block syntax (or empty lines) the msgstr has and the msgid has not;
    ``first=False`` leaves the first line to the rendering."""
    own = {line.strip() for line in _LINE.split(msgid)}
    lines = _LINE.split(msgstr)
    for number, line in enumerate(lines, 1):
        if number == 1 and not first:
            continue
        text = line.lstrip(" \t")
        where = f"line {number}" if len(lines) > 1 else "the translation"
        if not text.strip():
            if len(lines) > 1 and "" not in own:
                yield f"{where} is empty, which starts a new block; remove the empty line"
            continue
        if line.strip() in own:
            continue
        for what, pattern in _SYNTAX:
            if pattern.match(text):
                yield (f"{where} starts with Markdown block syntax, {what}: {_short(text)!r}; "
                       "only lines the msgid has may be syntax")
                break


# --- saying what changed -------------------------------------------------------------------

_NAMES = {"strong": "**bold**", "em": "*emphasis*", "b": "bold", "i": "italics", "br": "a line break",
          "p": "a paragraph", "ul": "a list", "ol": "a numbered list", "li": "a list item", "pre": "a code block",
          "blockquote": "a quote", "table": "a table", "tr": "a table row", "td": "a table cell",
          "th": "a table header cell", "hr": "a horizontal rule", "input": "a checkbox", "#comment": "an HTML comment",
          "#decl": "an HTML declaration", "#pi": "an HTML processing instruction", "#cdata": "a CDATA section",
          "sup": "a superscript", "abbr": "an abbreviation"}


def _short(text: str, limit: int = 48) -> str:
    """A value as a reason shows it: on one line (line breaks and control characters
    escaped), at most ``limit`` characters."""
    text = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _describe(tag: str, attrs: tuple[tuple[str, str], ...], text: str) -> str:
    values = dict(attrs)
    if tag == "a" and "href" in values:
        return f"link to {_short(values['href'])!r}"
    if tag == "img":
        return f"image {_short(values.get('src', ''))!r}"
    if tag == "code":
        return f"inline code `{_short(text)}`"
    if tag.startswith("/"):
        return f"a stray end tag <{tag}>"
    name = "a heading" if tag[:1] == "h" and tag[1:].isdigit() else _NAMES.get(tag, f"<{tag}>")
    shown = " ".join(f'{k}="{_short(v, 32)}"' if v else k for k, v in attrs if k not in ("href", "src"))
    return f"{name} with {shown}" if shown else name


def _thing(element: Element) -> str:
    """An element as a difference names it: ``the link to `x.md```, ``inline code `x```,
    ``a heading``, ``**bold**``, ``a <span> element``."""
    values = dict(element.attrs)
    if element.tag == "a" and "href" in values:
        return f"the link to `{_short(values['href'])}`"
    if element.tag == "img":
        return f"the image `{_short(values.get('src', ''))}`"
    if element.tag == "code":
        return f"inline code `{_short(element.text)}`"
    if element.tag.startswith("/"):
        return f"a stray end tag <{element.tag}>"
    if element.tag[:1] == "h" and element.tag[1:].isdigit():
        return "a heading"
    return _NAMES.get(element.tag, f"a <{element.tag}> element")


def difference(english: Skeleton, translated: Skeleton) -> str | None:
    """The first real difference between the skeleton of the English and that of its
    translation (:func:`po_i18n.skeleton.first_difference`), as one short clause:
    ``heading id `usage` became `utilisation```, ``adds inline code `x```, ``loses the
    link to `x.md```, ``the <a> href `a.md` became `b.md```, ``moves **bold** into the
    link to `a.md``` (when both have the same elements); ``None`` when the skeletons are equal."""
    found = first_difference(english, translated)
    if found is None:
        return None
    old, new, parent = found
    inline = parent.tag != "#root" and parent.tag not in ("p", "li", "td", "th")
    where = f" in {_thing(parent)}" if inline else ""
    moved = english.elements() == translated.elements()  # the same elements: one of them went elsewhere
    if old is None:
        return (f"moves {_thing(new)} into {_thing(parent)}" if inline else f"moves {_thing(new)}") if moved \
            else f"adds {_thing(new)}{where}"
    if new is None:
        return (f"moves {_thing(old)} out of {_thing(parent)}" if inline else f"moves {_thing(old)}") if moved \
            else f"loses {_thing(old)}{where}"
    if old.tag != new.tag:
        return f"{_thing(old)} became {_thing(new)}{where}"
    if old.text != new.text:
        return f"code `{_short(old.text)}` became `{_short(new.text)}`{where}"
    before, after = dict(old.attrs), dict(new.attrs)
    heading = old.tag[:1] == "h" and old.tag[1:].isdigit()
    for name in dict.fromkeys([*after, *before]):
        if before.get(name) == after.get(name):
            continue
        owner = "heading" if heading else f"the <{old.tag}>"
        if name not in before:
            return f"{owner} gains {name} `{_short(after[name], 40)}`" if after[name] else f"{owner} gains {name}"
        if name not in after:
            return f"{owner} loses its {name} `{_short(before[name], 40)}`" if before[name] else f"{owner} loses {name}"
        return f"{owner} {name} `{_short(before[name], 40)}` became `{_short(after[name], 40)}`"
    return f"changes {_thing(old)}{where}"


def _attribute_change(old: tuple[tuple[str, str], ...], new: tuple[tuple[str, str], ...]) -> str:
    """``adds class="x"; removes id; id "a" becomes "b"`` for two attribute lists."""
    before, after = dict(old), dict(new)
    parts = [f'adds {k}="{_short(v, 40)}"' if v else f"adds {k}" for k, v in new if k not in before]
    parts += [f"removes {k}" for k in before if k not in after]
    parts += [f"{k} {_short(before[k], 24)!r} becomes {_short(v, 40)!r}" for k, v in new if k in before and before[k] != v]
    return ", ".join(parts) or "reorders them"


_CODE_CHANGE = 3  # distinct characters a code change may have on each side to be named character by character
_CODE_COMPARED = 200  # longest code span compared character by character


def _characters(chars: str) -> str:
    return ", ".join(invisible.describe(c) for c in dict.fromkeys(chars))


def _code_changes(missing: list[str], added: list[str]):
    """``(msgid's code, msgstr's code, what changed)`` for each code span of the msgstr
    that is a msgid's code with a few characters changed (a homoglyph, another space):
    the characters named as Unicode names them (``U+0430 CYRILLIC SMALL LETTER A where the
    msgid has U+0061 LATIN SMALL LETTER A``). Each code is paired once, with the most
    similar one (difflib's ratio)."""
    left = [m for m in missing if len(m) <= _CODE_COMPARED]
    for new in added:
        if len(new) > _CODE_COMPARED or not left:
            continue
        old = max(left, key=lambda m: difflib.SequenceMatcher(None, m, new, autojunk=False).ratio())
        ops = [op for op in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if op[0] != "equal"]
        theirs = "".join(old[i1:i2] for _, i1, i2, _, _ in ops)
        mine = "".join(new[j1:j2] for _, _, _, j1, j2 in ops)
        if len(set(theirs)) > _CODE_CHANGE or len(set(mine)) > _CODE_CHANGE:
            continue
        if mine and theirs:
            change = f"it has {_characters(mine)} where the msgid has {_characters(theirs)}"
        elif mine:
            change = f"it adds {_characters(mine)}"
        else:
            change = f"it leaves out {_characters(theirs)}"
        left.remove(old)
        yield old, new, change


def _differences(english: Skeleton, translated: Skeleton, msgid: str, msgstr: str) -> list[str]:
    """Why two skeletons differ, in a translator's words (one phrase each)."""
    out: list[str] = []
    codes_en, codes_tr = english.codes(), translated.codes()
    ticks = (msgid.count("`"), msgstr.count("`"))
    if ticks[0] != ticks[1] and codes_en != codes_tr:
        # one lost backtick re-pairs every code span after it: name the cause first
        out.append(f"has {ticks[1]} backticks where the msgid has {ticks[0]}, so a code span is left open or "
                   "closed early and every one after it shifts; copy the code spans exactly")
    lost, extra = sorted((codes_en - codes_tr).elements()), sorted((codes_tr - codes_en).elements())
    for old, new, change in list(_code_changes(lost, extra)):
        lost.remove(old)
        extra.remove(new)
        out.append(f"inline code `{_short(old)}` is written `{_short(new)}`: {change}; copy code exactly")
    for code in lost:
        out.append(f"inline code `{_short(code)}` missing or changed")
    for code in extra:
        out.append(f"adds inline code `{_short(code)}`")
    rest_en = Counter({k: n for k, n in english.elements().items() if k[0] != "code"})
    rest_tr = Counter({k: n for k, n in translated.elements().items() if k[0] != "code"})
    missing, added = rest_en - rest_tr, rest_tr - rest_en
    lowered = msgstr.lower()
    for tag, attrs, text in sorted(added.elements()):
        same = next((m for m in sorted(+missing) if m[0] == tag), None)
        if tag.isalnum() and f"<{tag}" in lowered:
            out.append(f"adds raw HTML <{tag}>" + (f" with {' '.join(k for k, _ in attrs)}" if attrs else ""))
        elif same is not None:
            missing[same] -= 1
            if tag in ("a", "img"):
                old, new = (dict(a).get("href" if tag == "a" else "src", "") for a in (same[1], attrs))
                out.append(f"{'link' if tag == 'a' else 'image'} target {_short(old)!r} changed to {_short(new)!r}"
                           if old != new else f"changes the attributes of {_describe(*same)}: "
                                              f"{_attribute_change(same[1], attrs)}")
            else:
                out.append(f"changes the attributes of {_describe(tag, (), '')}: {_attribute_change(same[1], attrs)}")
        else:
            out.append(f"adds {_describe(tag, attrs, text)}")
    for tag, attrs, text in sorted(+missing):
        out.append(f"{_describe(tag, attrs, text)} missing")
    if not out:  # the same elements, nested otherwise: say where the first one moved
        out.append(difference(english, translated) or "changes the markup")
    if len(out) > _MAX_REASONS:
        out[_MAX_REASONS:] = [f"and {len(out) - _MAX_REASONS} more changes to the markup"]
    return out
