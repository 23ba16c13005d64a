"""Translations are untrusted input: check that a msgstr keeps its msgid's markup and adds
nothing that could change the page's structure or run code.

Used by ``course check`` (every problem reported) and at build time (a failing
translation renders in English, with a warning naming catalog, line and reason).
"""
from __future__ import annotations

import functools
import re
from collections import Counter

__all__ = ["accept", "problems"]

_CODE = re.compile(r"(`+)(.+?)\1", re.S)
_LINK_TARGET = re.compile(r"\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_REF_LABEL = re.compile(r"\]\[([^\]]*)\]")
_FOOTNOTE = re.compile(r"\[\^([^\]]+)\]")
_TAG = re.compile(r"</?([A-Za-z][\w-]*)\b[^>]*>")
_ENTITY = re.compile(r"&(#?\w+);")
_AUTOLINK = re.compile(r"<(?:https?|mailto):[^>]+>")
_EVENT_ATTR = re.compile(r"\bon[a-z]+\s*=", re.I)
_BLOCK_START = re.compile(r"^(?:#{1,6}\s|>|[-+*]\s|\d+[.)]\s|\||/{3}|!{3}|\?{3}|={3}|\s{4}|`{3}|~{3}|-{3,}\s*$)")
_ATTR_LIST = re.compile(r"\{\s*[:#.][^}]*\}")


def _without_code(text: str) -> str:
    return _CODE.sub("", text)


def _multiset(pattern: re.Pattern, text: str) -> Counter:
    return Counter(pattern.findall(text))


def problems(msgid: str, msgstr: str) -> list[str]:
    """Every reason a translation cannot be used, as short phrases.

    Args:
        msgid: the English message (inline Markdown).
        msgstr: its translation.

    Returns:
        An empty list when the translation is safe; else one phrase per problem, e.g.
        ``"inline code `RANK` missing or changed"``.

    The answer is memoised per (msgid, msgstr): one build asks about each message
    from the renderer and from every status page.
    """
    return list(_problems(msgid, msgstr))


def accept(segment, msgstr: str) -> str | None:
    """The ``accept`` callback of :func:`coursekit.render.render` that the site uses:
    ``None`` for a safe translation, else its problems joined by ``"; "``.

    Args:
        segment: the :class:`coursekit.segment.Segment` being translated.
        msgstr: its translation.
    """
    return "; ".join(_problems(segment.msgid, msgstr)) or None


@functools.lru_cache(maxsize=1 << 16)
def _problems(msgid: str, msgstr: str) -> tuple[str, ...]:
    found: list[str] = []
    codes_id = Counter(m.group(2) for m in _CODE.finditer(msgid))
    codes_str = Counter(m.group(2) for m in _CODE.finditer(msgstr))
    for code in sorted((codes_id - codes_str).elements()):
        found.append(f"inline code `{code}` missing or changed")
    for code in sorted((codes_str - codes_id).elements()):
        found.append(f"adds inline code `{code}`")
    plain_id, plain_str = _without_code(msgid), _without_code(msgstr)
    checks = (
        (_LINK_TARGET, "link or image target"),
        (_REF_LABEL, "reference link label"),
        (_FOOTNOTE, "footnote reference"),
        (_ENTITY, "HTML entity"),
        (_AUTOLINK, "autolink"),
    )
    for pattern, what in checks:
        a, b = _multiset(pattern, plain_id), _multiset(pattern, plain_str)
        for item in sorted((a - b).elements()):
            found.append(f"{what} '{item}' missing or changed")
        for item in sorted((b - a).elements()):
            found.append(f"adds {what} '{item}'")
    tags_id = Counter(t.lower() for t in _TAG.findall(_AUTOLINK.sub("", plain_id)))
    tags_str = Counter(t.lower() for t in _TAG.findall(_AUTOLINK.sub("", plain_str)))
    if tags_id != tags_str:
        extra = sorted(set((tags_str - tags_id).elements()))
        missing = sorted(set((tags_id - tags_str).elements()))
        if extra:
            found.append(f"adds raw HTML <{'>, <'.join(extra)}>")
        if missing:
            found.append(f"HTML tag <{'>, <'.join(missing)}> missing")
    lowered = plain_str.lower()
    if "<script" in lowered and "<script" not in plain_id.lower() and not any("<script>" in f for f in found):
        found.append("adds a script")
    if _EVENT_ATTR.search(plain_str) and not _EVENT_ATTR.search(plain_id):
        found.append("adds an event-handler attribute")
    if "javascript:" in lowered and "javascript:" not in plain_id.lower():
        found.append("adds a javascript: link")
    if re.search(r"-{1,}8<-{1,}", msgstr) and not re.search(r"-{1,}8<-{1,}", msgid):
        found.append("adds a --8<-- include")
    if _ATTR_LIST.search(plain_str) and not _ATTR_LIST.search(plain_id):
        found.append("adds an attribute list { … }")
    if plain_str.count("**") % 2 != plain_id.count("**") % 2:
        found.append("unbalanced ** emphasis")
    if plain_str.count("[") - plain_str.count("]") != plain_id.count("[") - plain_id.count("]"):
        found.append("unbalanced [ ] brackets")
    for line in msgstr.split("\n"):
        if _BLOCK_START.match(line) and not _BLOCK_START.match(msgid.split("\n")[0]):
            found.append(f"a line starts with Markdown block syntax: {line[:20]!r}")
            break
    if "\n\n" in msgstr.strip("\n") and "\n\n" not in msgid:
        found.append("adds a blank line (a new paragraph)")
    return tuple(found)
