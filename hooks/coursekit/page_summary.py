"""A page's description for search engines and link previews, taken from the page itself:
the first paragraph of prose after its title, as rendered in the page's language.

Translators are asked for nothing new: the paragraph is already translated. Read with the
standard library's HTML parser (:mod:`html.parser`), the way MkDocs's own search plugin
reads pages (``mkdocs/contrib/search/search_index.py``).
"""
from __future__ import annotations

import re
from html.parser import HTMLParser

from babel.core import Locale, get_global

__all__ = ["MAX_LENGTH", "first_paragraph", "og_locale", "shorten"]

_CHUNK = 4096  # characters of HTML fed to the parser at a time
MAX_LENGTH = 160  # characters: about what search result pages show of a description
# Blocks whose paragraphs are not the page's own prose: notices, quick checks, tables,
# lists, quotes, figures.
_ASIDE_TAGS = frozenset({"aside", "blockquote", "details", "figure", "nav", "ol", "table", "ul"})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
# Where a sentence ends: . ! ? followed by a space, or the full stops of CJK scripts.
_SENTENCE_END = re.compile(r"[.!?](?=\s)|[。！？]")


class _FirstParagraph(HTMLParser):
    """Collects the text of the first ``<p>`` after the first ``<h1>`` outside asides."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, is an aside)
        self.seen_h1 = False
        self.depth = 0  # > 0 inside the paragraph being read
        self.parts: list[str] = []
        self.done = False

    def handle_starttag(self, tag, attrs):
        if self.done or tag in _VOID:
            return
        classes = (dict(attrs).get("class") or "").split()
        aside = tag in _ASIDE_TAGS or (tag == "div" and "admonition" in classes)
        if self.depth:
            self.depth += 1
        elif tag == "p" and self.seen_h1 and not any(is_aside for _, is_aside in self.stack):
            self.depth = 1
        self.stack.append((tag, aside))

    def handle_endtag(self, tag):
        if self.done or tag in _VOID:
            return
        if tag == "h1":
            self.seen_h1 = True
        while self.stack:  # close what the end tag closes (HTML lets some end tags be left out)
            open_tag, _ = self.stack.pop()
            if self.depth:
                self.depth -= 1
                if not self.depth:
                    self.done = True
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self.depth and not self.done:
            self.parts.append(data)


def first_paragraph(html: str) -> str:
    """The text of a page's first paragraph of prose after its ``<h1>``.

    Args:
        html: the page's rendered content (MkDocs's ``page.content``).

    Returns:
        The paragraph's text, tags stripped, entities decoded, whitespace collapsed to
        single spaces; ``""`` when the page has no ``<h1>`` or no such paragraph. A
        paragraph inside a notice, quick check, table, list or quote is skipped.
    """
    parser = _FirstParagraph()
    # Fed in pieces, and no further once the paragraph has ended: the rest of a page (a
    # program's whole listing, every highlighted token a tag) holds nothing more to read.
    for start in range(0, len(html), _CHUNK):
        parser.feed(html[start:start + _CHUNK])
        if parser.done:
            break
    parser.close()
    return " ".join("".join(parser.parts).split())


def shorten(text: str, limit: int = MAX_LENGTH) -> str:
    """``text`` cut to at most ``limit`` characters.

    Cut after the last whole sentence that fits, when that keeps at least a third of the
    limit (a description of whole sentences needs no ellipsis); else at the last space that fits,
    with ``…``; else (a script written without spaces, and no sentence end) at ``limit - 1``
    characters, with ``…``.

    Args:
        text: one line of text (:func:`first_paragraph`).
        limit: the most characters the result may have, ``…`` included.
    """
    if len(text) <= limit:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit + 1) if m.end() <= limit]
    if ends and ends[-1] >= limit // 3:
        return text[:ends[-1]].rstrip()
    cut = text.rfind(" ", 0, limit)
    head = text[:cut] if cut >= limit // 2 else text[:limit - 1]
    return head.rstrip(" ,;:、，") + "…"


def og_locale(language: str) -> str:
    """The Open Graph locale (``language_TERRITORY``, https://ogp.me/#optional) of a page
    language code, with the territory CLDR's likely subtags give it.

    Args:
        language: a language code, ``ru``, ``ja``, ``pt_BR`` or ``pt-BR``.

    Returns:
        ``ru_RU``, ``ja_JP``, ``en_US``, ``pt_BR``; the language alone where CLDR knows
        no likely territory.

    Raises:
        ValueError: ``language`` is not a locale Babel knows (``babel.UnknownLocaleError``).
    """
    locale = Locale.parse(language.replace("-", "_"))
    if not locale.territory:
        likely = get_global("likely_subtags").get(locale.language)
        if likely:
            locale = Locale.parse(likely)
    return f"{locale.language}_{locale.territory}" if locale.territory else locale.language
