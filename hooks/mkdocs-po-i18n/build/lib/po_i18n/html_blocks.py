"""Where the site's engine finds raw HTML on a page, and the tags of Markdown in HTML.

Python-Markdown takes raw HTML out of a page before it parses any block: its
``html_block`` preprocessor (``markdown/preprocessors.py`` HtmlBlockPreprocessor, or
md_in_html's own when that extension is on) feeds the whole page to an HTML parser
(``markdown/htmlparser.py`` HTMLExtractor) that stashes a block-level element starting
at a line's first four columns, up to its matching end tag and across blank lines, and a
comment, declaration or processing instruction standing on its own. With md_in_html
(``markdown/extensions/md_in_html.py`` HTMLExtractorExtra), an element with a
``markdown`` attribute keeps only its tags as HTML and its content is Markdown (block or
span), except the children where Markdown is off.

CommonMark's rules (markdown-it-py's, which the segmenter parses with) differ: an HTML
block ends at a blank line, never holds Markdown, and some tags cannot interrupt a
paragraph. So the segmenter asks the engine's own parser, subclassed here only to note
where each piece of HTML it stashes lies in the source (:func:`html_markup`).
"""
from __future__ import annotations

import bisect

import markdown
from markdown.extensions.md_in_html import HTMLExtractorExtra, HtmlBlockPreprocessor as _MdInHtmlPreprocessor
from markdown.htmlparser import HTMLExtractor

__all__ = ["html_markup"]


class _Recorder:
    """Mixin over the engine's HTML extractor: records ``(start, end)`` character spans of
    the source that the engine keeps as HTML (``self.markup``), without changing what the
    extractor does."""

    def reset(self):
        self.markup: list[tuple[int, int]] = []
        self._raw_start: int | None = None
        self._opened: list[tuple[int, str | None]] = []  # md_in_html elements: (start, state)
        super().reset()

    def _here(self) -> int:
        return self.line_offset + self.offset

    def handle_starttag(self, tag, attrs):
        start, inraw = self._here(), self.inraw
        text = self.get_starttag_text() or ""
        super().handle_starttag(tag, attrs)
        if not inraw and self.inraw:
            self._raw_start = start  # a raw block begins
        elif len(getattr(self, "mdstack", ())) > len(self._opened):  # an element of Markdown in HTML
            self.markup.append((start, start + len(text)))
            self._opened.append((start, self.mdstate[-1]))

    def handle_endtag(self, tag):
        start, inraw = self._here(), self.inraw
        real = self.rawdata.startswith("</", start)
        text = self.get_endtag_text(tag) if real else ""
        super().handle_endtag(tag)
        if inraw and not self.inraw and self._raw_start is not None:
            self.markup.append((self._raw_start, start + len(text)))
            self._raw_start = None
        elif len(getattr(self, "mdstack", ())) < len(self._opened):
            closed = self._opened[len(self.mdstack):]
            del self._opened[len(self.mdstack):]
            off = [s for s, state in closed if state not in ("block", "span")]
            if off:  # Markdown off: the element and its content stay HTML
                self.markup.append((min(off), start + len(text)))
            elif real:
                self.markup.append((start, start + len(text)))

    def handle_empty_tag(self, data, is_block):
        start = self._here()
        before = len(self.md.htmlStash.rawHtmlBlocks)
        super().handle_empty_tag(data, is_block)
        if len(self.md.htmlStash.rawHtmlBlocks) > before and not self.inraw:  # stashed on its own
            self.markup.append((start, start + len(data)))

    def close(self):
        super().close()
        if self._raw_start is not None:  # an element never closed: raw to the end of the page
            self.markup.append((self._raw_start, len(self.rawdata)))
            self._raw_start = None


class _Plain(_Recorder, HTMLExtractor):
    pass


class _Extra(_Recorder, HTMLExtractorExtra):
    pass


def html_markup(md: markdown.Markdown, lines: list[str]) -> dict[int, list[tuple[int, int]]]:
    """The columns of each line that the engine keeps as HTML, not Markdown.

    Args:
        md: a Markdown instance of the site's engine (its ``html_block`` preprocessor
            says whether md_in_html is on); its HTML stash is reset afterwards.
        lines: the page's lines without line endings, with lines that earlier
            preprocessors take away (fenced code, snippet notation, front matter) empty.

    Returns:
        line (0-based) -> sorted ``(start, end)`` column ranges: whole raw HTML blocks and
        stand-alone comments (with their content), and the start and end tags of
        elements whose content is Markdown (md_in_html's ``markdown`` attribute). Lines
        without HTML are absent.
    """
    proc = md.preprocessors["html_block"] if "html_block" in md.preprocessors else None
    if proc is None:
        return {}
    parser = (_Extra if isinstance(proc, _MdInHtmlPreprocessor) else _Plain)(md)
    try:
        parser.feed("\n".join(lines))
        parser.close()
        spans = parser.markup
    finally:
        md.htmlStash.reset()
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    out: dict[int, list[tuple[int, int]]] = {}
    for begin, end in spans:
        first = bisect.bisect_right(starts, begin) - 1
        last = bisect.bisect_right(starts, max(begin, end - 1)) - 1
        for n in range(first, min(last, len(lines) - 1) + 1):
            lo = begin - starts[n] if n == first else 0
            hi = end - starts[n] if n == last else len(lines[n])
            out.setdefault(n, []).append((max(lo, 0), min(hi, len(lines[n]))))
    for ranges in out.values():
        ranges.sort()
    return out
