"""The page-wide half of the safety check: translations that are each accepted on their
own (:mod:`po_i18n.safety`) must also keep the structure of their page together.

A message is judged alone, as the block it is. Python-Markdown does not read a page one
block at a time: its raw-HTML preprocessor (``markdown.htmlparser.HTMLExtractor``, a
``html.parser.HTMLParser``) runs over the whole page before any block is parsed, and
keeps state from one message to the next. The long fuzz run of the check
(``course bench --only fuzz``) found a Japanese page where a table header translated
as ``&#`` and a cell of another table translated as ``</img>…`` were each harmless, but
together made the parser copy the text of a distant paragraph into the cell and drop
three paragraphs and a code block.

So after the per-message check, the page is rendered as the build renders it (every
accepted translation spliced in by :func:`po_i18n.render.render`, the English fallback
spans included) and its element skeleton (:mod:`po_i18n.skeleton`) is compared with the
English page's, rendered with the same fallback spans, and so are the hidden characters
its text shows (:mod:`po_i18n.invisible`: no more of each than the English page shows). They are equal for every page of
a sound catalog, which costs one rendering of the page per language (the English one is
shared). When they differ, a bisection over the translations in page order finds one
that completes a breaking set, refuses it, and repeats until the page keeps its
structure; each refused message renders in English, with a one-line reason. After
:data:`MAX_TOGETHER` such refusals on one page, every other translation of the page is
refused at once (:data:`TOO_MANY`): the work stays bounded whatever the catalog holds.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping

from . import invisible, verdicts
from . import includes
from .includes import included as _included
from .safety import difference
from .markdown_engine import MarkdownEngine
from .render import RenderResult, render
from .segment import segment
from .skeleton import Skeleton, skeleton

__all__ = ["MAX_TOGETHER", "TOGETHER", "TOO_MANY", "clear_caches", "page_change", "refused_together", "render_checked"]

TOGETHER = "accepted on its own, but changes its page together with the page's other translations"
# The id of a heading without one of its own is made from its text (toc's slugify); the
# renderer keeps the English id by writing `{ #id }` after a translated heading
# (po_i18n.anchors), which only attr_list reads: without it, name the remedy.
_SLUG_HINT = "; translated headings keep the English id only with attr_list: add it to mkdocs.yml's markdown_extensions"

# Each translation refused for what it does together with others costs a bisection (about
# log2(messages) page renderings, 0.1 to 0.3 s each for a lesson). No sound catalog has
# one; after this many on one page the rest of the page's translations are refused at
# once, so no catalog makes a build do more than this many bisections per page.
MAX_TOGETHER = 8
TOO_MANY = (f"more than {MAX_TOGETHER} translations of this page change it together, so the whole page is shown in "
            "English; fix the ones refused for changing the page first")


@functools.lru_cache(maxsize=256)
def _skeleton(engine: MarkdownEngine, text: str, included: str) -> Skeleton | str:
    """The skeleton of a page rendered by ``engine``, or the error (str) it raised;
    ``included`` (:func:`_included` of the page) is only part of the memo's key."""
    try:
        return skeleton(engine.convert(text))
    except Exception as exc:  # noqa: BLE001 - hostile input may break an extension; that is a change too
        return f"{type(exc).__name__}: {exc}"


@functools.lru_cache(maxsize=1024)
def _ordered(engine: MarkdownEngine, source: str) -> tuple[str, ...]:
    """The page's msgids in page order, each once."""
    return tuple(dict.fromkeys(s.msgid for s in segment(source, engine)))


def refused_together(engine: MarkdownEngine, source: str, accepted: Mapping[str, str],
                     fallback_lang: str | None = None) -> dict[str, str]:
    """The translations of one page that must show in English although each was accepted
    alone, because together they change the page's structure.

    Args:
        engine: the site's :class:`po_i18n.markdown_engine.MarkdownEngine` (mkdocs.yml's
            extensions; it segments and renders the page).
        source: the English page's Markdown.
        accepted: msgid -> msgstr of the translations the per-message check accepted
            (others, and msgids not on the page, are left out).
        fallback_lang: the build's ``fallback_lang`` (see :func:`po_i18n.render.render`):
            messages shown in English are wrapped the same way on both sides.

    Returns:
        msgid -> one-line reason (:data:`TOGETHER` followed by what the page's first difference
        is, :func:`page_change`; then :data:`TOO_MANY` for the rest); ``{}`` when the
        translated page has the English page's skeleton. Never raises on hostile input:
        a rendering that fails counts as a change. The verdict is remembered for the
        same page, the same included files' content and the same translations on it
        (the rest of ``accepted`` does not count).
    """
    on_page = tuple((m, accepted[m]) for m in _ordered(engine, source) if m in accepted)
    return dict(_refused_together(engine, source, on_page, fallback_lang, _included(engine, source), MAX_TOGETHER))


def clear_caches() -> None:
    """Forget every page verdict and skeleton (for measuring the check's cold cost)."""
    includes.clear_caches()
    for cached in (_skeleton, _ordered, _refused_together):
        cached.cache_clear()


# The build asks twice per page and language (its warnings, then its rendering), and a
# preview rebuild asks again for every page although one catalog changed: remember the
# verdict of each (page, what it includes, translations on it). One entry per page and language.
@functools.lru_cache(maxsize=1024)
@verdicts.remembered("page")
def _refused_together(engine: MarkdownEngine, source: str, on_page: tuple[tuple[str, str], ...],
                      fallback_lang: str | None, included: str, bound: int) -> tuple[tuple[str, str], ...]:
    """:func:`refused_together` over ``on_page``, the page's (msgid, msgstr) pairs in page
    order; ``included`` is :func:`_included` of the page; after ``bound`` refusals the rest
    is refused at once (:data:`MAX_TOGETHER`, an argument so that it is part of the key)."""
    accepted = dict(on_page)
    msgids = _ordered(engine, source)
    same = {m: m for m in msgids if accepted.get(m) == m}  # kept as they are, on both sides
    order = [m for m in msgids if accepted.get(m) not in (None, "", m)]

    def skeletons(chosen: list[str]) -> tuple[Skeleton | str, Skeleton | str]:
        translated = render(source, {**same, **{m: accepted[m] for m in chosen}}, fallback_lang=fallback_lang, engine=engine)
        english = render(source, {**same, **{m: m for m in chosen}}, fallback_lang=fallback_lang, engine=engine)
        # The site's own engine, as MkDocs renders the page: without Pygments, pymdownx.highlight
        # lays code out differently, and a page's text can end up inside a <pre>.
        return _skeleton(engine, english.markdown, included), _skeleton(engine, translated.markdown, included)

    def breaks(chosen: list[str]) -> bool:
        return page_change(*skeletons(chosen), engine) is not None

    refused: dict[str, str] = {}
    while order and breaks(order):
        if len(refused) == bound:  # bounded work: the rest of the page shows in English
            refused.update((m, TOO_MANY) for m in order)
            break
        lo, hi = 0, len(order)  # no translation keeps the page; all of them break it
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if breaks(order[:mid]):
                hi = mid
            else:
                lo = mid
        refused[order[hi - 1]] = f"{TOGETHER}: {page_change(*skeletons(order[:hi]), engine)}"  # the last of the shortest breaking prefix
        del order[hi - 1]
    return tuple(refused.items())


def page_change(english: Skeleton | str, translated: Skeleton | str, engine: MarkdownEngine | None = None) -> str | None:
    """What a page's translation changes, as one clause: the first difference of the two
    skeletons (:func:`po_i18n.safety.difference`: ``heading id `usage` became
    `utilisation-usage```, followed, when ``engine`` lacks attr_list, by the remedy), else the first
    hidden character (:mod:`po_i18n.invisible`) it shows more often, else the error a
    rendering raised (a str in place of a skeleton); ``None`` when nothing changed."""
    if isinstance(english, str) or isinstance(translated, str):
        if english == translated:
            return None
        return (f"the page cannot be rendered ({translated})" if isinstance(translated, str)
                else f"the page renders, where the English page cannot ({english})")
    clause = difference(english, translated)
    if clause is not None:
        if clause.startswith("heading id ") and engine is not None and not engine.has("attr_list"):
            clause += _SLUG_HINT
        return clause
    added = invisible.added(english.shown, translated.shown)
    if added:
        char, mine, theirs = added[0]
        return f"it shows {invisible.describe(char)} {mine} times where the English page shows it {theirs}"
    return None


def render_checked(source: str, table: Mapping[str, str], check, engine: MarkdownEngine,
                   fallback_lang: str | None = None, mark=None) -> RenderResult:
    """A page in another language as the build renders it: :func:`po_i18n.render.render`
    with the per-message check (``check``, a :class:`po_i18n.safety.PageCheck` of this
    page), then :func:`refused_together`; every refused translation shows in English and
    is in ``result.rejected`` with its reason.

    Args:
        source: the English page's Markdown.
        table: msgid -> msgstr, the catalog's usable translations.
        check: the page's :class:`po_i18n.safety.PageCheck`.
        engine: the site's Markdown engine.
        fallback_lang: see :func:`po_i18n.render.render`.
        mark: see :func:`po_i18n.render.render`; it marks the page returned, never the
            renderings the check compares (a mark changes no verdict).

    Returns:
        The :class:`po_i18n.render.RenderResult`.
    """
    result = render(source, table, accept=check.accept, fallback_lang=fallback_lang, engine=engine, mark=mark)
    refused = {m for m, _ in result.rejected}
    together = refused_together(engine, source, {m: s for m, s in table.items() if m not in refused}, fallback_lang)
    if not together:
        return result
    return render(source, table, accept=lambda seg, msgstr: check.accept(seg, msgstr) or together.get(seg.msgid),
                  fallback_lang=fallback_lang, engine=engine, mark=mark)
