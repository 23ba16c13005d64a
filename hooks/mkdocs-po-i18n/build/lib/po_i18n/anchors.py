"""Headings keep their English anchor in every language.

A heading without an explicit id gets one from the toc extension: the slug of its text,
made unique on the page (``markdown/extensions/toc.py``, ``TocTreeprocessor.run``:
``unique(slugify(name, separator), used_ids)``). Translated, the text and so the slug
change (and a script with no Latin letters slugs to ``_1``, ``_2`` …), so links and the
language switch lose the section. The renderer therefore writes the English id onto a
translated heading (`` { #english-id }``, attr_list), computed by the site's own engine
with its toc options (``slugify``, ``separator``), so it is exactly the id the English
page gets.
"""
from __future__ import annotations

import functools
import re

from markdown.extensions.toc import unique

from .markdown_engine import MarkdownEngine
from .segment import Segment, segment

__all__ = ["has_own_id", "heading_anchor", "heading_ids"]

# a heading's own attribute list follows a space (attr_list's HEADER_RE, ``[ ]+{...}``):
# ":icon:{ .cls }" with none is the icon's, and the heading's id must not go into it
_HEADING_ATTRS = re.compile(r"[ \t]+\{:?[^{}]*\}[ \t]*$")
_HAS_ID = re.compile(r"\{:?[^{}]*#[^\s{}]")
_ATTR_ID = re.compile(r"\{:?[ ]*[^}\n]*?#([^\s}]+)[^}\n]*\}")
_REF_DEF = re.compile(r"^[ ]{0,3}\[[^\]^][^\]]*\]:[ \t]*\S")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]]+\]")
_PLAIN = re.compile(r"[\w .,;?'\"()/-]+")  # no inline syntax: what toc reads is the text itself
_HEADING_ID = re.compile(r'<h[1-6]\b[^>]*?\sid="([^"]*)"')


def _tail(lines: list[str], seg: Segment) -> str:
    """What follows a heading's text on its line: closing hashes, an attribute list."""
    line, col = seg.end
    return lines[line][col:].rstrip("\r\n") if line < len(lines) else ""


def has_own_id(lines: list[str], seg: Segment) -> bool:
    """Whether a heading's attribute list gives it an id (``## Title { #title }``)."""
    attrs = _HEADING_ATTRS.search(_tail(lines, seg))
    return bool(attrs and _HAS_ID.search(attrs.group(0)))


def heading_ids(markdown: str, engine: MarkdownEngine) -> list[str | None]:
    """The id each heading of an English page gets, in page order (``None`` for a
    heading whose attribute list gives its own id).

    Args:
        markdown: the English page.
        engine: the site's engine; its toc extension decides the slugs.

    Returns:
        One entry per ``"heading"`` segment of :func:`po_i18n.segment.segment`.

    Headings of plain text are slugged with the toc extension's own ``slugify`` and
    ``unique`` (the page's attribute-list ids taken, as toc finds them taken). Otherwise
    the headings (with their attribute lists), the page's other attribute-list ids and
    its reference definitions (so ``[text][ref]`` slugs as ``text``) are rendered as one
    small document and the ids read back. Cached per page and engine.
    """
    return list(_heading_ids(markdown, engine))


@functools.lru_cache(maxsize=256)
def _heading_ids(markdown: str, engine: MarkdownEngine) -> tuple[str | None, ...]:
    lines = markdown.splitlines(keepends=True)
    headings = [s for s in segment(markdown, engine) if s.kind == "heading"]
    heading_lines = {s.start[0] for s in headings}
    own = [has_own_id(lines, s) for s in headings]
    if all(_PLAIN.fullmatch(s.msgid) and "--" not in s.msgid for s, o in zip(headings, own) if not o):
        # Plain text slugs as it reads: toc's own slugify and unique(), no rendering.
        toc = _toc(engine)
        if toc is not None:
            used = {m.group(1) for number, line in enumerate(lines) for m in _ATTR_ID.finditer(line)}
            return tuple(None if o else unique(toc.slugify(s.msgid, toc.sep), used, {}) for s, o in zip(headings, own))
    doc = [line.rstrip("\r\n") for line in lines if _REF_DEF.match(line)]
    for number, line in enumerate(lines):
        if number not in heading_lines:
            doc += [f"x\n{{: #{m.group(1)} }}" for m in _ATTR_ID.finditer(line)]
    for seg in headings:
        attrs = _HEADING_ATTRS.search(_tail(lines, seg))
        text = _FOOTNOTE_REF.sub("", seg.msgid.replace("\n", " "))
        doc.append(f"## {text}{attrs.group(0) if attrs else ''}")
    html = engine.convert("\n\n".join(doc) + "\n", without=("pymdownx.snippets",))
    found = _HEADING_ID.findall(html)
    if len(found) != len(headings):  # not every line rendered as a heading: give no ids rather than wrong ones
        return tuple(None for _ in headings)
    return tuple(None if o else found_id for o, found_id in zip(own, found))


@functools.lru_cache(maxsize=16)
def _toc(engine: MarkdownEngine):
    """The engine's toc treeprocessor (its ``slugify`` and ``sep`` are the site's options)."""
    md = engine.markdown(without=("pymdownx.snippets",))
    return md.treeprocessors["toc"] if "toc" in md.treeprocessors else None


def heading_anchor(lines: list[str], seg: Segment, text: str, english_id: str | None) -> tuple[str, tuple[int, int]]:
    """A heading's new text with the English id written on it.

    Args:
        lines: the English page's lines (with line ends).
        seg: the heading's segment.
        text: what replaces the heading's text (a translation, or the English wrapped
            in a language span).
        english_id: the id the English heading gets, ``None`` to leave it as it is.

    Returns:
        ``(text, end)``: the replacement and the source position copying resumes at
        (past the opening ``{`` of an attribute list the id was added to).
    """
    if english_id is None:
        return text, seg.end
    tail = _tail(lines, seg)
    attrs = _HEADING_ATTRS.search(tail)
    if attrs:  # "## Title { .class }": the id joins the list there is (only the last one counts)
        brace = attrs.start() + attrs.group(0).index("{")
        opener = re.match(r"\{:?[ ]*", tail[brace:]).group(0)
        line, col = seg.end
        return f"{text}{tail[:brace]}{opener}#{english_id} ", (line, col + brace + len(opener))
    return f"{text} {{ #{english_id} }}", seg.end
