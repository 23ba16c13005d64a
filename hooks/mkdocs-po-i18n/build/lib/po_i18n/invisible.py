"""Characters that change what a reader sees without being seen themselves.

A translation can keep every element of its msgid and still show something else: a
right-to-left override makes a browser draw ``0.01`` as ``10.0``, tag characters carry
hidden text into the page and its search index, a zero-width space splits a word that
readers search for. This module says which characters those are, by Unicode's own
properties (the Python ``unicodedata`` module's data, and the derived property Python does
not expose, read through ``backrefs``, a dependency of mkdocs-material), never by a list
of code points:

* general category ``C`` (UAX #44, "General_Category Values"): ``Cf`` format characters
  (bidirectional embeddings, overrides and isolates, the marks LRM, RLM and ALM, zero-width
  space, joiners, word joiner, soft hyphen, byte order mark, tag characters, interlinear
  annotation marks, ...), ``Cc`` controls, ``Co`` private use, ``Cs`` surrogates and
  ``Cn`` unassigned code points and noncharacters (as of this Python's Unicode version);
* ``Zl`` and ``Zp``, the line and paragraph separators;
* the explicit bidirectional formatting characters (``unicodedata.bidirectional`` of LRE,
  RLE, LRO, RLO, PDF, LRI, RLI, FSI, PDI: UAX #9, section 2);
* Default_Ignorable_Code_Point (Unicode's DerivedCoreProperties.txt; UAX #44 and the
  Unicode Standard, section 5.21): what a renderer shows as nothing, including the
  variation selectors (which carry hidden bytes after an emoji), the combining grapheme
  joiner and the Hangul fillers, which are not in category C.

The HTML whitespace characters (tab, line feed, form feed, carriage return: HTML Standard,
"ASCII whitespace") are not hidden: a browser shows them as a space.

None of these is needed in Russian, Japanese, Turkish or Swedish prose. Two are needed by
other scripts: U+200C ZERO WIDTH NON-JOINER (Persian writes it inside words, Indic scripts
use it after a virama) and U+200D ZERO WIDTH JOINER (Indic conjuncts). A joiner is not
counted where IDNA's CONTEXTJ rules allow it (RFC 5892, Appendix A.1 and A.2, as the
``idna`` package implements them with Unicode's Joining_Type data): after a virama (both),
or between a left-joining and a right-joining letter (ZWNJ). Anywhere else (between Latin
letters, say) a joiner shows nothing and is a hidden channel, so it counts like any other
hidden character. The soft hyphen (U+00AD, ``Cf``) is hidden too: it shows only at a line
end, but it breaks search and copied words, and no source text here needs it; a
translation may keep the ones its msgid has.

The policy built on this (:func:`added`): a translation may show each hidden character at
most as often as its msgid does.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from html import unescape

from backrefs import bre
from idna import IDNAError
from idna.core import valid_contextj

__all__ = ["added", "browser_charrefs", "describe", "effect", "hidden", "hidden_in"]

# UAX #9, section 2: the explicit directional embeddings, overrides and isolates.
_EXPLICIT_BIDI = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
_HTML_WHITESPACE = frozenset("\t\n\f\r ")
_DEFAULT_IGNORABLE = bre.compile(r"\p{Default_Ignorable_Code_Point}")
_JOINERS = frozenset("\u200c\u200d")
_CONTEXT = 32  # characters on each side of a joiner that its CONTEXTJ rule may look at


@functools.lru_cache(maxsize=4096)
def hidden(char: str) -> bool:
    """Whether a character (a one-character str) changes what the reader sees without being
    seen: category C, Zl or Zp, an explicit bidirectional control, or default-ignorable
    (see the module docstring); never the HTML whitespace characters."""
    if char in _HTML_WHITESPACE:
        return False
    category = unicodedata.category(char)
    return (category[0] == "C" or category in ("Zl", "Zp") or unicodedata.bidirectional(char) in _EXPLICIT_BIDI
            or _DEFAULT_IGNORABLE.match(char) is not None)


def describe(char: str) -> str:
    """A character as a reason names it: ``"U+202E RIGHT-TO-LEFT OVERRIDE"`` (its Unicode
    name, from ``unicodedata.name``); one without a name is described by its category,
    e.g. ``"U+E000 (a private-use character)"``."""
    code = f"U+{ord(char):04X}"
    name = unicodedata.name(char, "")
    if name:
        return f"{code} {name}"
    category, point = unicodedata.category(char), ord(char)
    if category == "Cn":
        if 0xFDD0 <= point <= 0xFDEF or point & 0xFFFE == 0xFFFE:  # Unicode Standard, section 23.7
            return f"{code} (a noncharacter)"
        return f"{code} (unassigned in Unicode {unicodedata.unidata_version})"
    return f"{code} ({ {'Cc': 'a control character', 'Co': 'a private-use character', 'Cs': 'a surrogate'}.get(category, category)})"


def effect(char: str) -> str:
    """What a hidden character does to the text, as a clause for a reason (e.g. ``"which
    reorders the text shown around it"``)."""
    category = unicodedata.category(char)
    direction = unicodedata.bidirectional(char)
    if direction in _EXPLICIT_BIDI or (category == "Cf" and direction in ("L", "R", "AL")):  # LRM, RLM, ALM are marks
        return "which reorders the text shown around it"
    if category == "Co":
        return "which each font shows differently or not at all"
    if category == "Cn":
        return "which readers see as a box or not at all"
    if category in ("Cc", "Cs", "Zl", "Zp"):
        return "which is not shown as text"
    if _DEFAULT_IGNORABLE.match(char) is None:
        return "which changes how the text around it is shown"
    return "which is invisible but stays in the text readers copy and search"


def _counted(text: str, position: int) -> bool:
    """Whether the hidden character at ``position`` counts: a joiner does not where
    RFC 5892's CONTEXTJ rule allows it."""
    if text[position] not in _JOINERS:
        return True
    start = max(0, position - _CONTEXT)
    window = text[start: position + _CONTEXT + 1]
    try:
        return not valid_contextj(window, position - start)
    except (ValueError, IDNAError):  # a neighbour with no Unicode name: no context to allow it
        return True


def hidden_in(text: str) -> Counter:
    """How often each hidden character (:func:`hidden`) occurs in ``text``, joiners in a
    context RFC 5892 allows left out."""
    chars = {c for c in set(text) if hidden(c)}
    if not chars:
        return Counter()
    return Counter(c for i, c in enumerate(text) if c in chars and _counted(text, i))


def added(english: str, translated: str) -> list[tuple[str, int, int]]:
    """The hidden characters a translation shows more often than its English.

    Args:
        english: the text the English shows (rendered, entities decoded).
        translated: the text the translation shows, the same way.

    Returns:
        ``(character, times in translated, times in english)`` for each such character,
        in the order they first occur in ``translated``; ``[]`` when there is none.
    """
    mine, theirs = hidden_in(translated), hidden_in(english)
    more = mine - theirs
    return [(c, mine[c], theirs[c]) for c in dict.fromkeys(translated) if c in more]


# A numeric character reference (HTML Standard, "numeric character reference state"), its
# semicolon optional as browsers read it; at most 8 hex or 10 decimal digits after leading
# zeros (larger numbers are U+FFFD to Python and browsers alike).
_CHARREF = re.compile(r"&#(?:[xX]0*([0-9a-fA-F]{1,8})(?![0-9a-fA-F])|0*([0-9]{1,10})(?![0-9]));?")


def browser_charrefs(html: str) -> str:
    """``html`` with each numeric character reference that Python's ``html.unescape``
    drops (controls such as ``&#1;``, noncharacters such as ``&#xFDD0;``) replaced by the
    character itself, which is what a browser shows (HTML Standard, "numeric character
    reference end state": such a reference is a parse error, and the character is kept).
    The HTML then reads, with ``html.parser``, to the characters a browser shows."""
    if "&#" not in html:
        return html

    def keep(match: re.Match) -> str:
        hex_digits, decimal = match.groups()
        point = int(hex_digits, 16) if hex_digits is not None else int(decimal)
        if point > 0x10FFFF or unescape(match.group()) != "":
            return match.group()
        return chr(point)

    return _CHARREF.sub(keep, html)
