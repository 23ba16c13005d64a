"""Render a page in another language: splice translations into the English source.

:func:`render` is a pure function of the English Markdown and a catalog mapping; it
does not need MkDocs, so the command line, the tests and any other static-site tool can
call it. Every byte outside a translated message's span is copied from the English page.
"""
from __future__ import annotations

import html
import re

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .anchors import has_own_id, heading_anchor, heading_ids
from .markdown_engine import DEFAULT_ENGINE, MarkdownEngine
from .segment import Segment, count_words, segment

_LANG_TAG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")
_ATTRIBUTE = re.compile(r"[a-z][a-z0-9-]*")  # a name mark() may give (class, title, data-*)

__all__ = ["RenderResult", "render"]


@dataclass
class RenderResult:
    """What :func:`render` produced.

    Attributes:
        markdown: the page in the target language (str).
        total: number of messages on the page.
        translated: messages that were replaced by a translation.
        missing: msgids rendered in English because the catalog had no usable
            translation for them, in page order.
        rejected: ``(msgid, reason)`` pairs whose translation the ``accept``
            callback refused; they are rendered in English too.
    """

    markdown: str
    total: int = 0
    translated: int = 0
    missing: list[str] = field(default_factory=list)
    rejected: list[tuple[str, str]] = field(default_factory=list)
    words: int = 0
    translated_words: int = 0

    @property
    def percent(self) -> float:
        """Share of the page's English words shown translated, 0-100."""
        return 100.0 if self.words == 0 else 100.0 * self.translated_words / self.words


def _splice(msgstr: str, continuation: str) -> str:
    """Lay a translation out in the source: hard breaks keep the block's prefixes."""
    lines = msgstr.split("\n")
    out = []
    for i, line in enumerate(lines):
        if i < len(lines) - 1 and not line.endswith("\\"):
            line = line.rstrip(" ") + "  "  # Python-Markdown's hard line break
        out.append(line if i == 0 else continuation + line)
    return "\n".join(out)


def render(
    markdown: str,
    catalog: Mapping[str, str],
    accept: Callable[[Segment, str], str | None] | None = None,
    fallback_lang: str | None = None,
    engine: MarkdownEngine | None = None,
    mark: Callable[[Segment, str | None], Mapping[str, str]] | None = None,
) -> RenderResult:
    """Translate an English page with a catalog.

    Args:
        markdown: the English page source.
        catalog: msgid -> msgstr for the usable translations only (not fuzzy, not
            empty). A msgid absent from it renders in English.
        accept: optional check of each translation, called as ``accept(segment,
            msgstr)``; it returns ``None`` to accept or a one-line reason to reject,
            and a rejected message renders in English.
        fallback_lang: a BCP 47 tag such as ``"en"``. When given, every message shown
            in English (missing or rejected) is wrapped in ``<span lang="...">`` so that
            screen readers and hyphenation treat it as English on a page whose
            ``<html lang>`` says otherwise (WCAG 2.2 success criterion 3.1.2, "Language
            of Parts"). Block titles (admonition, details, tab) are never wrapped: they
            are not always parsed as Markdown. ``None`` copies the English unchanged.
        engine: the site's Markdown engine (see :func:`po_i18n.segment.segment`;
            default :data:`po_i18n.markdown_engine.DEFAULT_ENGINE`).
        mark: optional attributes for each message shown in English, called as
            ``mark(segment, reason)`` (``reason``: ``None`` for a message without a usable
            translation, else why ``accept`` refused it); the attributes it returns
            (``{"class": ..., "title": ...}``, names in lower case) go on the message's
            ``<span>``, their values escaped, so nothing it returns can become markup.
            The preview uses it to outline what needs work (:mod:`po_i18n.preview`).
            Block titles are never marked (they are never wrapped, see above).

    A message whose translation equals its msgid is translated "as itself": its source
    bytes are kept, line layout included. A heading without an explicit id whose text
    changes gets the id the English heading has (`` { #id }``, computed as the site's
    toc extension computes it), so links and the language switch keep ``#section``.

    Raises:
        ValueError: ``fallback_lang`` is not a language tag, or ``mark`` returned an
            attribute name that is not a lower-case HTML attribute name.

    Returns:
        A :class:`RenderResult`. With an empty catalog, or one mapping every msgid to
        itself, and no ``fallback_lang``, ``result.markdown == markdown`` exactly, for
        any input.
    """
    if fallback_lang is not None and not _LANG_TAG.fullmatch(fallback_lang):
        raise ValueError(f"fallback_lang {fallback_lang!r} is not a language tag such as 'en' or 'pt-BR'")
    engine = engine or DEFAULT_ENGINE
    lines = markdown.splitlines(keepends=True)
    segments = segment(markdown, engine)
    result = RenderResult(markdown=markdown, total=len(segments))
    out: list[str] = []
    line, col = 0, 0  # how far the English has been copied
    ids: list[str | None] | None = None  # the English heading ids, computed when first needed
    heading = -1
    for seg in segments:
        if seg.kind == "heading":
            heading += 1
        words = count_words(seg.msgid)
        result.words += words
        msgstr = catalog.get(seg.msgid, "")
        reason = None
        if not msgstr:
            result.missing.append(seg.msgid)
        elif accept is not None:
            reason = accept(seg, msgstr)
            if reason is not None:
                result.rejected.append((seg.msgid, reason))
        (l0, c0), (l1, c1) = seg.start, seg.end
        if (l0, c0) < (line, col):
            continue  # overlapping spans cannot happen; never write twice
        if msgstr and reason is None:
            result.translated += 1
            result.translated_words += words
            if msgstr == seg.msgid:
                continue  # translated as itself: the source bytes, line layout included
            # a default title the page does not write is written as an explicit one
            text = seg.template.replace("{}", " ".join(msgstr.split("\n"))) if seg.template else \
                _splice(msgstr, seg.continuation)
        elif seg.kind.endswith(" title"):
            continue
        else:
            attributes = {**({"lang": fallback_lang} if fallback_lang else {}), **(mark(seg, reason) if mark else {})}
            if not attributes:
                continue
            text = f"<span{_attributes(attributes)}>{_copy(lines, (l0, c0), (l1, c1))}</span>"
        out.append(_copy(lines, (line, col), (l0, c0)))
        if seg.kind == "heading" and not has_own_id(lines, seg):
            if ids is None:
                ids = heading_ids(markdown, engine)
            text, (l1, c1) = heading_anchor(lines, seg, text, ids[heading] if heading < len(ids) else None)
        out.append(text)
        line, col = l1, c1
    if not out:
        return result
    out.append(_copy(lines, (line, col), (len(lines), 0)))
    result.markdown = "".join(out)
    return result


def _attributes(attributes: Mapping[str, str]) -> str:
    """`` name="value"`` for each attribute, values escaped (quotes included)."""
    for name in attributes:
        if not _ATTRIBUTE.fullmatch(name):
            raise ValueError(f"mark() returned the attribute name {name!r}; use a lower-case HTML attribute name such as 'class'")
    return "".join(f' {name}="{html.escape(value, quote=True)}"' for name, value in attributes.items())


def _copy(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The source text between two (line, column) positions."""
    (l0, c0), (l1, c1) = start, end
    if l0 == l1:
        return lines[l0][c0:c1] if l0 < len(lines) else ""
    parts = [lines[l0][c0:]]
    parts.extend(lines[l0 + 1 : l1])
    if l1 < len(lines):
        parts.append(lines[l1][:c1])
    return "".join(parts)
