"""MkDocs hook: inline code in table cells wraps after ``.`` and ``_``, never mid-word.

Tables of the lessons name identifiers (``torch.distributed.fsdp.fully_shard``,
``reshard_after_forward``, ``LOCAL_WORLD_SIZE``) in columns a phone makes narrow; Material
lets inline code break anywhere (``.md-typeset code { word-break: break-word }``, its
``main.css``), so they broke mid-word. Each ``.`` or ``_`` (or run of them) between two
letters or digits of such code gets a ``<wbr>`` after it (none after a leading ``__`` or a
trailing ``.``: a line of its own would hold only punctuation) (a line break opportunity, HTML Living Standard "The wbr element"; it adds no
character to the text, so copying and searching see the same identifier), and
``docs/assets/course.css`` lets the browser break only there.

The page's HTML is read with the standard library's HTML parser and the ``<wbr>`` elements
are spliced into the original text at the parser's positions: every other byte of the page
is written back as it was (no re-serialization), code blocks (``<pre>``) and attributes are
never touched.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser

__all__ = ["BREAK_AFTER", "WBR", "with_breaks"]

# A break may follow a run of dots and underscores with a letter or digit on each side.
BREAK_AFTER = re.compile(r"(?<=[^\W_])[._]+(?=[^\W_])")
WBR = "<wbr>"
_CELLS = frozenset({"td", "th"})
# Elements without an end tag (HTML Living Standard, "Void elements"): never on the stack.
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})


class _CellCode(HTMLParser):
    """Finds the offsets in ``html`` right after each ``.`` and ``_`` of the text of a
    ``<code>`` inside a ``<td>`` or ``<th>`` and outside any ``<pre>``."""

    def __init__(self, html: str):
        # convert_charrefs=False: each text run arrives as written in the source (entities
        # apart), so its offset plus a character's index is that character's offset.
        super().__init__(convert_charrefs=False)
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", html)]
        self._stack: list[str] = []
        self.offsets: list[int] = []

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._line_starts[line - 1] + column

    def handle_starttag(self, tag, attrs):
        if tag not in _VOID:
            self._stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self._stack:  # close what the end tag closes (HTML lets some end tags be left out)
            del self._stack[len(self._stack) - 1 - self._stack[::-1].index(tag):]

    def handle_data(self, data):
        if "code" not in self._stack or "pre" in self._stack or not _CELLS.intersection(self._stack):
            return
        start = self._offset()
        self.offsets.extend(start + m.end() for m in BREAK_AFTER.finditer(data))


def with_breaks(html: str) -> str:
    """``html`` with ``<wbr>`` after each ``.`` and ``_`` of inline code in table cells
    (:data:`BREAK_AFTER`).

    Args:
        html: an HTML fragment or document (a page's content as MkDocs renders it).

    Returns:
        The same text with only ``<wbr>`` elements added; ``html`` itself when it has no
        such code. Its text content (``textContent``, what a reader copies) is unchanged.
    """
    if "<code" not in html or ("<td" not in html and "<th" not in html):
        return html
    parser = _CellCode(html)
    parser.feed(html)
    parser.close()
    if not parser.offsets:
        return html
    pieces, last = [], 0
    for offset in parser.offsets:
        pieces += [html[last:offset], WBR]
        last = offset
    return "".join(pieces) + html[last:]


# Each table of a page, from its start tag to the end tag that closes it (Python-Markdown's
# tables do not nest): only these are parsed, not a lesson's whole page.
_TABLE = re.compile(r"<table\b.*?</table>", re.S)


def on_page_content(html, page, config, files):
    """Line break opportunities in the inline code of the page's table cells (before
    Material's search plugin indexes the page, which skips ``<wbr>`` as a void element)."""
    if "<table" not in html:
        return html
    return _TABLE.sub(lambda table: with_breaks(table.group(0)), html)
