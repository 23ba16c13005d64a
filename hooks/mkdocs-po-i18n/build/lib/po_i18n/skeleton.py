"""The element skeleton of rendered HTML: everything a translation may not change.

Two renderings have the same skeleton when they have the same elements with the same
attributes and values, nested the same way; text is left out. Inline elements may come
in another order inside their block (word order differs between languages), but not in
another number or kind; block elements keep their order. Comments, declarations and
stray end tags count as elements, so a translation cannot add them either.

Two kinds of content are not text for this purpose: what is inside ``<code>``, ``<pre>``,
``<script>`` and ``<style>`` (code is never translated, so its text is part of the
skeleton, character for character), and the values of every attribute except ``alt`` and
``title``, which are human-readable and so are translated (their presence still counts).
Inline code is compared exactly but for one thing a browser does not show: a run of the
white space CSS collapses (space, tab, line feed, carriage return: CSS Text Module Level 3,
section 4.1) reads as one space, so a code span that the msgid wraps over a line break
and the msgstr writes on one line is the same code. No other space folds: an ideographic
space (U+3000) or a no-break space (U+00A0) in code is another character, which the
reader would copy.

Text is left out of the comparison but kept beside it (:attr:`Skeleton.shown`): what a
reader sees outside code, entities decoded, with the ``alt`` and ``title`` values, so
that a check can look at the characters it shows (:mod:`po_i18n.invisible`).

The HTML is read with the standard library's tokenizer (:mod:`html.parser`), the same
way for both sides of a comparison, after numeric character references that Python drops
but browsers keep are made the characters browsers show
(:func:`po_i18n.invisible.browser_charrefs`); which elements are blocks is
Python-Markdown's list (``markdown.util.BLOCK_LEVEL_ELEMENTS``).
"""
from __future__ import annotations

import difflib
import re
import secrets
from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser

from markdown.util import BLOCK_LEVEL_ELEMENTS

from .invisible import browser_charrefs

__all__ = ["Element", "Skeleton", "first_difference", "skeleton"]

# Elements without an end tag (HTML Living Standard, "void elements").
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_VERBATIM = frozenset({"code", "pre", "script", "style"})
_TEXT_ATTRIBUTES = frozenset({"alt", "title"})
_BLOCK = frozenset(BLOCK_LEVEL_ELEMENTS)
# CSS Text Module Level 3, section 4.1: the white space a browser collapses in inline text
# (a carriage return becomes a line feed when HTML is parsed, or counts as a space).
_COLLAPSIBLE = re.compile(r"[ \t\n\r]+")


@dataclass
class Element:
    """One element of a skeleton.

    Attributes:
        tag: the lower-case tag name; ``"#comment"``, ``"#decl"``, ``"#pi"`` and
            ``"#cdata"`` for those constructs, ``"/name"`` for an end tag that closes
            nothing.
        attrs: ``(name, value)`` pairs, sorted; the value of ``alt`` and ``title`` is
            ``""`` (only their presence counts), a value-less attribute has ``""`` too.
        text: for code, pre, script and style elements their whole text, else ``""``.
        children: the child elements in document order.
    """

    tag: str
    attrs: tuple[tuple[str, str], ...] = ()
    text: str = ""
    children: list["Element"] = field(default_factory=list)

    def key(self) -> tuple:
        """A hashable, comparable form: equal for equal skeletons, inline runs sorted."""
        kids: list[tuple] = []
        run: list[tuple] = []
        for child in self.children:
            if child.tag in _BLOCK:
                kids.extend(sorted(run))
                run = []
                kids.append(child.key())
            else:
                run.append(child.key())
        kids.extend(sorted(run))
        return (self.tag, self.attrs, self.text, tuple(kids))

    def walk(self):
        """Every element below this one, depth first, in document order."""
        for child in self.children:
            yield child
            yield from child.walk()

    def ordered(self) -> list[tuple[tuple, "Element"]]:
        """``(key, child)`` for each child, in the order :meth:`key` compares them:
        blocks in document order, each run of inline elements sorted."""
        out: list[tuple[tuple, Element]] = []
        run: list[tuple[tuple, Element]] = []
        for child in self.children:
            if child.tag in _BLOCK:
                out.extend(sorted(run, key=lambda pair: pair[0]))
                run = []
                out.append((child.key(), child))
            else:
                run.append((child.key(), child))
        out.extend(sorted(run, key=lambda pair: pair[0]))
        return out


@dataclass
class Skeleton:
    """The skeleton of one HTML fragment (see the module docstring).

    Attributes:
        root: a ``"#root"`` element holding the top-level elements.
        shown: the text a reader sees outside code (entities decoded), and the value of
            each ``alt`` and ``title`` attribute on a line of its own; not compared.
    """

    root: Element
    shown: str = ""

    def key(self) -> tuple:
        """The comparable form of the whole fragment."""
        return self.root.key()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Skeleton) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def elements(self) -> Counter:
        """How often each ``(tag, attrs)`` occurs (code elements also keyed by their text)."""
        return Counter((e.tag, e.attrs, e.text) for e in self.root.walk())

    def codes(self) -> Counter:
        """The text of each ``<code>`` element, counted."""
        return Counter(e.text for e in self.root.walk() if e.tag == "code")


def first_difference(old: Skeleton, new: Skeleton) -> tuple[Element | None, Element | None, Element] | None:
    """Where two skeletons first differ, reading them in the order they are compared
    (:meth:`Element.ordered`): ``(old element, new element, parent)`` for two elements
    that differ in their tag, attributes or code text, ``(old element, None, parent)``
    for an element ``new`` lacks, ``(None, new element, parent)`` for one it adds, where
    ``parent`` is the element of ``new`` they are in (its ``"#root"`` at the top);
    ``None`` when the skeletons are equal.

    The children of two elements that are alike are aligned as difflib's
    ``SequenceMatcher`` aligns their keys; at the first change that is not only deeper
    down, an element of one side is paired with the first element of the same tag on the
    other side, when there is one, and the search goes into a pair that differs only in
    its children.
    """
    return _first_difference(old.root, new.root)


def _first_difference(old: Element, new: Element) -> tuple[Element | None, Element | None, Element] | None:
    a, b = old.ordered(), new.ordered()
    matcher = difflib.SequenceMatcher(None, [k for k, _ in a], [k for k, _ in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        mine, theirs = [e for _, e in a[i1:i2]], [e for _, e in b[j1:j2]]
        for x in mine:  # a pair of the same tag: the change is in it
            y = next((y for y in theirs if y.tag == x.tag), None)
            if y is not None:
                if (x.attrs, x.text) == (y.attrs, y.text):
                    return _first_difference(x, y) or (x, y, new)
                return x, y, new
        if mine and theirs:
            return mine[0], theirs[0], new
        return (mine[0], None, new) if mine else (None, theirs[0], new)
    return None


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root")
        self.stack = [self.root]
        self.texts: dict[int, list[str]] = {}
        self.inline_code: set[int] = set()
        self.shown: list[str] = []

    def _add(self, element: Element) -> None:
        self.stack[-1].children.append(element)

    def _show_attributes(self, attrs: list[tuple[str, str | None]]) -> None:
        self.shown.extend(f"\n{value}\n" for name, value in attrs if name in _TEXT_ATTRIBUTES and value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._show_attributes(attrs)
        element = Element(tag, _attributes(attrs))
        self._add(element)
        if tag not in _VOID:
            if tag == "code" and not any(e.tag == "pre" for e in self.stack):
                self.inline_code.add(id(element))
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._show_attributes(attrs)
        self._add(Element(tag, _attributes(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                for element in self.stack[depth:]:
                    self._close(element)
                del self.stack[depth:]
                return
        if tag not in _VOID:
            self._add(Element("/" + tag))

    def handle_data(self, data: str) -> None:
        verbatim = False
        for element in self.stack:
            if element.tag in _VERBATIM:
                self.texts.setdefault(id(element), []).append(data)
                verbatim = True
        if not verbatim:
            self.shown.append(data)

    def handle_comment(self, data: str) -> None:
        self._add(Element("#comment", (("data", data),)))

    def handle_decl(self, decl: str) -> None:
        self._add(Element("#decl", (("data", decl),)))

    def handle_pi(self, data: str) -> None:
        self._add(Element("#pi", (("data", data),)))

    def unknown_decl(self, data: str) -> None:
        self._add(Element("#cdata", (("data", data),)))

    def _close(self, element: Element) -> None:
        if element.tag in _VERBATIM:
            element.text = "".join(self.texts.pop(id(element), ()))
            if id(element) in self.inline_code:  # shown as one line: a soft break in the source is a space
                element.text = _COLLAPSIBLE.sub(" ", element.text)

    def finish(self) -> Element:
        self.close()
        for element in self.stack[1:]:
            self._close(element)
        return self.root


def _attributes(attrs: list[tuple[str, str | None]]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((name, "" if name in _TEXT_ATTRIBUTES or value is None else value) for name, value in attrs))


# A whole <pre> element with no other <pre> inside: Pygments' output, thousands of spans
# per page. It is kept as one element whose text is its exact HTML, which compares it
# more strictly than its skeleton would, and reads a page several times faster.
_PRE = re.compile(r"<pre\b[^>]*>(?:(?!<pre\b).)*?</pre>", re.S | re.I)


def skeleton(html: str) -> Skeleton:
    """The skeleton of an HTML fragment (str), such as Python-Markdown's output.

    A ``<pre>`` element is one element ``pre`` (no children) whose text is its whole
    HTML: code blocks must be identical, markup and all.

    Never raises on malformed HTML: unclosed elements end where the input ends, and an
    end tag that matches no open element is kept as an element of its own.
    """
    blocks: list[str] = []
    marker = f"data-skeleton-{secrets.token_hex(8)}"  # cannot be in the input

    def keep(match: re.Match) -> str:
        blocks.append(match.group())
        return f'<pre {marker}="{len(blocks) - 1}"></pre>'

    builder = _Builder()
    html = browser_charrefs(html)
    builder.feed(_PRE.sub(keep, html) if "<pre" in html.lower() else html)
    root = builder.finish()
    for element in root.walk():
        if element.tag == "pre" and len(element.attrs) == 1 and element.attrs[0][0] == marker:
            element.attrs, element.text, element.children = (), blocks[int(element.attrs[0][1])], []
    return Skeleton(root, "".join(builder.shown))
