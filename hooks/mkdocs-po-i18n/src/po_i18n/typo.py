"""Whether a changed English message is only a typo fix, so that its translations may
stay current (``po-i18n update --keep-translations``, issue 37).

``msgmerge`` marks a changed message fuzzy, however small the change: the gettext
manual ("Fuzzy Entries") says the slight alteration "should often be reflected in the
translated string", which needs the translator ("Invoking the msgmerge Program" for the
matching). A spelling fix in the English leaves every translation as right as before, and
the established remedy is po4a's ``msguntypot`` (its manual page: "When you fix a trivial
error which surely doesn't affect translations (e.g. a typo) in a POT file, you should
unfuzzy the corresponding msgstr"): the one who fixes the ``msgid`` updates the
catalogs, ``msgid`` and ``msgstr`` together. ``msguntypot`` trusts every difference
between two templates; here the writer asks for it per run (``po-i18n update
--keep-translations``), and this module decides which changes it may cover, by an
explicit rule (:func:`more_than_typo`):

1. **Only words change.** Each msgid is read as a sequence of tokens: words (runs of
   letters, an apostrophe inside a word included), runs of spaces and tabs, and every
   other character on its own (digits, punctuation, Markdown and HTML syntax, line
   breaks). The two sequences are aligned (:class:`difflib.SequenceMatcher`), and
   wherever they differ, a word must stand for a word and a space for a space: the same
   numbers, punctuation and markup characters, the same number of words, in the same
   places. A double space made single passes; a word split in two or two joined
   (``alot`` → ``a lot``), a repeated word removed, a line break added or removed, does
   not.
2. **Each changed word changes little**: at most :data:`WORD_EDITS` characters
   (inserted, deleted or replaced, as :class:`difflib.SequenceMatcher` aligns the two
   words: a swap of two letters counts 2), and the two words keep
   :data:`WORD_SIMILARITY` of their letters in common (difflib's ratio). So ``teh`` →
   ``the``, ``recieve`` → ``receive``, ``paralel`` → ``parallel``, ``pytorch`` →
   ``PyTorch`` pass; a two-letter word never changes (``on`` → ``in``), nor does ``ten``
   → ``two``.
3. **The message changes little**: at most :data:`MESSAGE_SHARE` of its characters
   changed, counted as in 2, or :data:`MESSAGE_EDITS` in a short message (a short
   heading may have one typo fixed, two swapped letters included).
4. **It renders the same.** Rendered by the site's own Markdown engine as the block it
   is (each kind it has on its page), the new msgid passes the safety judgement
   (:mod:`po_i18n.safety`) against the old one, as a translation would: the same
   elements and attributes, the same link targets and image sources, every inline code
   span character for character, the same lines of block syntax.

What the rule cannot know is meaning: ``not`` → ``now`` passes 1 to 4. It bounds what a
writer's request may cover, so that a real rewording in the same run still turns fuzzy;
the writer vouches for the rest, and the command prints every message it keeps.
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from .safety import PageCheck

__all__ = ["MESSAGE_EDITS", "MESSAGE_SHARE", "WORD_EDITS", "WORD_SIMILARITY", "edits", "more_than_typo", "shown_change"]

# A word: letters (no digit, no underscore), with apostrophes inside (it's, don't).
_WORD = r"[^\W\d_]+(?:['\u2019][^\W\d_]+)*"
_TOKEN = re.compile(rf"(?P<word>{_WORD})|(?P<space>[ \t]+)|.", re.S)

# Rule 2. Two edits take a transposition (teh -> the) or a doubled letter and a
# dropped one; three would let a three-letter word become any other (ten -> two).
WORD_EDITS = 2
# difflib's ratio 2*M/T of the two words: a three-letter word may change one letter or
# swap two (4/6 = 0.67), a two-letter word none (2/4 = 0.5).
WORD_SIMILARITY = 0.65
# Rule 3. The course's paragraphs are 100 to 900 characters; 5 % lets a spelling pass
# over a long paragraph through (a typo per ~20 characters is already a rewrite).
MESSAGE_SHARE = 0.05
MESSAGE_EDITS = 2


def edits(old: str, new: str) -> int:
    """The characters changed from ``old`` to ``new`` (str) as difflib aligns them:
    each replaced, deleted or inserted run counts its longer side (Levenshtein's
    distance or more: a swap of two letters counts 2)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in matcher.get_opcodes() if op != "equal")


def _tokens(text: str) -> list[tuple[str, str]]:
    """``(key, text)`` per token: ``("w", word)``, ``(" ", spaces)``, ``(char, char)``."""
    out = []
    for match in _TOKEN.finditer(text):
        key = "w" if match.group("word") else " " if match.group("space") else match.group()
        out.append((key, match.group()))
    return out


def more_than_typo(old: str, new: str, page: PageCheck, kinds: Iterable[str]) -> str | None:
    """Why changing a message's English from ``old`` to ``new`` is more than a typo fix
    (the rule of this module's docstring), or ``None`` when it is only one.

    Args:
        old: the previous msgid (``#| msgid`` of the fuzzy entry ``msgmerge`` would write).
        new: the new msgid, from the English page.
        page: the safety check of the new msgid's page (:meth:`po_i18n.safety.TranslationCheck.page`).
        kinds: the kinds the new msgid has on its page (``"paragraph"``, ``"heading"``…).

    Returns:
        ``None``, or one phrase naming the first thing that is more than a typo, such as
        ``'2' became '4' (only letters of words may change)``. Never raises.
    """
    if old == new:
        return None
    before, after = _tokens(old), _tokens(new)
    matcher = difflib.SequenceMatcher(None, [t for _, t in before], [t for _, t in after], autojunk=False)
    words: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        lost, added = before[i1:i2], after[j1:j2]
        if op == "equal":
            continue
        if [k for k, _ in lost] != [k for k, _ in added]:  # a number, punctuation, markup, a word break or a line
            return (f"{_quoted(''.join(t for _, t in lost))} became {_quoted(''.join(t for _, t in added))} "
                    "(only the letters of words may change: no number, punctuation, markup, word break or line)")
        words += [(a, b) for (key, a), (_, b) in zip(lost, added) if key == "w" and a != b]
    changed = 0
    for a, b in words:
        count = edits(a, b)
        similarity = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
        if count > WORD_EDITS or similarity < WORD_SIMILARITY:
            return (f"the word {a!r} became {b!r} ({count} of its {max(len(a), len(b))} characters changed; a typo "
                    f"fix changes at most {WORD_EDITS} and keeps most of the word)")
        changed += count
    allowed = max(MESSAGE_EDITS, int(MESSAGE_SHARE * len(new)))
    if changed > allowed:
        return (f"{changed} characters of words changed, more than the {allowed} a typo fix may change in "
                f"{len(new)} characters ({MESSAGE_SHARE:.0%})")
    problems = page.problems(old, new, kinds)
    if problems:
        return f"it renders differently: {'; '.join(problems)}"
    return None


def _quoted(text: str) -> str:
    return repr(text) if text else "nothing"


def shown_change(old: str, new: str, context: int = 16, limit: int = 70) -> tuple[str, str]:
    """``(old, new)`` shortened to where they differ, for one line of output: the
    changed part with about ``context`` characters either side, widened to whole words,
    ``…`` where text is left out, line breaks shown as ``\\n``; a changed part longer
    than ``limit`` characters keeps its two ends."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    ops = [op for op in matcher.get_opcodes() if op[0] != "equal"] or [("equal", 0, len(old), 0, len(new))]
    start = max(0, ops[0][1] - context)  # the same in both: the text before the first change is common
    while start > 0 and not old[start - 1].isspace():
        start -= 1
    tail = len(old) - ops[-1][2]  # the text after the last change is common too
    end = max(0, tail - context)
    while end > 0 and not old[len(old) - end].isspace():
        end -= 1

    def cut(text: str) -> str:
        part = text[start:len(text) - end].strip()
        if len(part) > limit:
            part = part[: limit // 2] + "…" + part[-(limit // 2):]
        return ("…" if start else "") + part.replace("\n", "\\n") + ("…" if end else "")

    return cut(old), cut(new)
