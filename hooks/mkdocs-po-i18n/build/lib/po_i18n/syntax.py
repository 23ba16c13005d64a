"""Which Markdown syntax a site's engine understands, as the segmenter needs to know it.

The segmenter (:mod:`po_i18n.segment`) decides what is a block, a title, code or prose
the way Python-Markdown with the site's extensions decides it. This module reads those
facts from a :class:`po_i18n.markdown_engine.MarkdownEngine` once per engine: which
container syntaxes are enabled (``!!!`` admonition, ``???`` pymdownx.details, ``===``
pymdownx.tabbed, ``///`` pymdownx.blocks and which of those blocks take a title),
definition lists, footnotes, abbreviations, attribute lists, callouts
(pymdownx.quotes), fancy list markers, and the processors whose own rules decide fenced
code (pymdownx.superfences or fenced_code) and snippet notation (pymdownx.snippets). The
regular expressions are the extensions' own (their source files are named below), so
the segmenter cannot drift from them.
"""
from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass

from markdown.extensions.abbr import AbbrBlockprocessor
from markdown.extensions.admonition import AdmonitionProcessor
from markdown.extensions.attr_list import AttrListTreeprocessor
from markdown.extensions.def_list import DefListProcessor
from markdown.extensions.fenced_code import FencedBlockPreprocessor

from .html_blocks import html_markup
from .markdown_engine import MarkdownEngine

__all__ = ["Syntax", "syntax_of"]

# markdown/extensions/footnotes.py, FootnoteBlockProcessor.RE (one line of it)
FOOTNOTE_DEF = re.compile(r"^[ ]{0,3}\[\^([^\]]*)\]:[ ]*(.*)$")
# pymdownx/quotes.py, QuotesProcessor.RE_CALLOUT
CALLOUT = re.compile(r"[ ]{0,3}> *\[!([\w-]+(?: *\| *[\w-]+)*)]([-+])?(.*?)(?:\n|$)")
# pymdownx/blocks/__init__.py, RE_START and RE_END (one line of each)
BLOCK_START = re.compile(r"^[ ]{0,3}(/{3,})[ ]*([\w-]+)[ ]*(?:\|[ ]*(.*?)[ ]*)?$")
BLOCK_END = re.compile(r"^[ ]{0,3}(/{3,})[ ]*$")


@dataclass(frozen=True)
class Syntax:
    """What one engine enables, for the segmenter.

    Attributes:
        admonition: ``!!! type "Title"`` (Python-Markdown's admonition).
        details: ``??? type "Title"`` / ``???+`` (pymdownx.details).
        tabbed: ``=== "Title"`` / ``===+`` / ``===!`` (pymdownx.tabbed).
        blocks: pymdownx.blocks names -> whether the text after ``|`` is a title
            (admonition, details and tab blocks) rather than an argument (html,
            caption, fancylists …).
        def_list, footnotes, abbr, attr_list, md_in_html: the extensions of those names.
        callouts: ``> [!note]`` alerts (pymdownx.quotes with ``callouts: true``).
        backslash_breaks: a backslash at the end of a line is a hard break
            (pymdownx.escapeall with ``hardbreak: true``); Python-Markdown alone only
            knows two trailing spaces.
        olist: the regular expression of an ordered list item (fancylists' when
            enabled), or ``None`` for Python-Markdown's plain ``1.``.
    """

    engine: MarkdownEngine
    admonition: bool
    details: bool
    tabbed: bool
    blocks: dict
    def_list: bool
    footnotes: bool
    abbr: bool
    attr_list: bool
    md_in_html: bool
    callouts: bool
    backslash_breaks: bool
    olist: re.Pattern | None

    def __hash__(self) -> int:
        return hash(self.engine)

    def __eq__(self, other) -> bool:
        return isinstance(other, Syntax) and other.engine == self.engine

    @functools.cached_property
    def _md(self):
        return self.engine.markdown()

    def fenced_lines(self, lines: list[str]) -> list[tuple[int, int]]:
        """``(first, last + 1)`` line ranges of the fenced code blocks, found by the
        engine's own fence processor (pymdownx.superfences ``search_nested``, or
        fenced_code's ``FENCED_BLOCK_RE``): an unclosed fence, or one whose lines leave
        its indentation, is no code block there, and so none here."""
        proc = self._md.preprocessors["fenced_code_block"] if "fenced_code_block" in self._md.preprocessors else None
        if proc is None:
            return []
        if isinstance(proc, FencedBlockPreprocessor):
            text = "\n".join(lines)
            out = []
            for m in proc.FENCED_BLOCK_RE.finditer(text):
                first = text.count("\n", 0, m.start())
                out.append((first, first + m.group(0).count("\n") + (0 if m.group(0).endswith("\n") else 1)))
            return out
        return _superfences_ranges(self._fence_recorder, lines)

    @functools.cached_property
    def _fence_recorder(self):
        proc = self._md.preprocessors["fenced_code_block"]
        rec = _recorder()(proc.md)
        rec.config, rec.extension = proc.config, proc.extension
        return rec

    def default_title(self, probe: str) -> str | None:
        """The title the engine shows for a container written without one (``!!! note``
        shows "Note", ``/// details`` none), read from the engine's own rendering.

        Args:
            probe: the container's header (with its block options, if any) and a one-line
                body, as the page writes it: ``"!!! note\\n    x\\n"``.

        Returns:
            The title's text, ``None`` when the engine shows no title or one that is not
            plain text. The titles come from each extension's own rule (admonition's
            capitalized type, pymdownx.blocks' ``DEF_TITLE`` or ``types`` option,
            pymdownx.quotes' alert name), so they are read back rather than re-derived.
        """
        return _default_title(self.engine, probe)

    def snippet_notation(self, lines: list[str]) -> list[bool]:
        """Which lines pymdownx.snippets treats as its notation (include lines, block
        markers and the paths between them, section markers) and removes; all ``False``
        without the extension (``SnippetPreprocessor.get_syntax_mask``)."""
        proc = self._md.preprocessors["snippet"] if "snippet" in self._md.preprocessors else None
        if proc is None:
            return [False] * len(lines)
        return proc.get_syntax_mask(lines)

    def html_markup(self, lines: list[str]) -> dict[int, list[tuple[int, int]]]:
        """The columns of each line that the engine keeps as raw HTML (blocks,
        stand-alone comments, md_in_html's tags), found by its own ``html_block``
        preprocessor (:func:`po_i18n.html_blocks.html_markup`); ``lines`` without
        endings, the lines earlier preprocessors remove (fences, snippets) empty."""
        return html_markup(self._md, lines)


# A container's title element: admonition's <p class="admonition-title"> (Python-Markdown,
# pymdownx.blocks, pymdownx.quotes) or details' <summary>; only plain text counts.
_TITLE_HTML = re.compile(r'<(p class="admonition-title"|summary)>([^<]*)</(?:p|summary)>')


@functools.lru_cache(maxsize=256)
def _default_title(engine: MarkdownEngine, probe: str) -> str | None:
    m = _TITLE_HTML.search(engine.convert(probe, without=("pymdownx.snippets",)))
    return html.unescape(m.group(2)) if m and m.group(2).strip() else None


@functools.cache
def _recorder() -> type:
    from pymdownx.superfences import SuperFencesBlockPreprocessor

    class _Recorder(SuperFencesBlockPreprocessor):
        """superfences' preprocessor that notes where each fence is instead of rendering it."""

        def process_nested_block(self, ws, content, start, end):
            self.found.append((start, end))
            self.clear()

        def reassemble(self, lines):
            return lines

    return _Recorder


def _superfences_ranges(rec, lines: list[str]) -> list[tuple[int, int]]:
    """Run superfences' own line scanner (``search_nested``) on the page's lines."""
    rec.found = []
    rec.run([line.expandtabs(4) for line in lines])  # NormalizeWhitespace runs first
    return rec.found


@functools.lru_cache(maxsize=16)
def syntax_of(engine: MarkdownEngine) -> Syntax:
    """The :class:`Syntax` of an engine (built once per engine: it instantiates the
    engine's Markdown to read its registered processors)."""
    md = engine.markdown()
    names = {}
    if "blocks" in md.parser.blockprocessors:
        from pymdownx.blocks.admonition import Admonition
        from pymdownx.blocks.details import Details
        from pymdownx.blocks.tab import Tab

        for name, block in md.parser.blockprocessors["blocks"].blocks.items():
            names[name] = issubclass(block, (Admonition, Details, Tab))
    olist = None
    if engine.has("pymdownx.fancylists"):
        olist = md.parser.blockprocessors["olist"].list_re
    quotes = dict(engine.configs.get("pymdownx.quotes", {}))
    escapeall = dict(engine.configs.get("pymdownx.escapeall", {}))
    return Syntax(
        engine=engine,
        admonition=engine.has("admonition") or engine.has("markdown.extensions.admonition"),
        details=engine.has("pymdownx.details"),
        tabbed=engine.has("pymdownx.tabbed"),
        blocks=names,
        def_list=engine.has("def_list") or engine.has("markdown.extensions.def_list") or engine.has("extra"),
        footnotes=engine.has("footnotes") or engine.has("markdown.extensions.footnotes") or engine.has("extra"),
        abbr=engine.has("abbr") or engine.has("markdown.extensions.abbr") or engine.has("extra"),
        attr_list=engine.has("attr_list") or engine.has("markdown.extensions.attr_list") or engine.has("extra"),
        md_in_html=engine.has("md_in_html") or engine.has("extra"),
        callouts=engine.has("pymdownx.quotes") and bool(quotes.get("callouts")),
        backslash_breaks=engine.has("pymdownx.escapeall") and bool(escapeall.get("hardbreak")),
        olist=olist,
    )


# The extensions' own patterns, matched against one line of a container's body.
ADMONITION = re.compile(AdmonitionProcessor.RE.pattern.replace("(?:^|\\n)", "^", 1).replace("(?:\\n|$)", "$"))
ATTR_LINE = re.compile(r"^[ ]*" + AttrListTreeprocessor.BASE_RE + r"[ ]*$")
DEF_MARKER = re.compile(DefListProcessor.RE.pattern.replace("(^|\\n)", "^", 1).replace("(\\n|$)", "$"))
ABBR_DEF = re.compile(AbbrBlockprocessor.RE.pattern.replace(r"\n?[ ]*", ""))


def _details():
    from pymdownx.details import DetailsProcessor

    return re.compile(DetailsProcessor.START.pattern.replace("(?:^|\\n)", "^", 1).replace("(?:\\n|$)", "$"))


def _tabbed():
    from pymdownx.tabbed import TabbedProcessor

    return re.compile(TabbedProcessor.START.pattern.replace("(?:^|\\n)", "^", 1).replace("(?:\\n|$)", "$"))


DETAILS = _details()
TABBED = _tabbed()
