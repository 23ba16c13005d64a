"""Translation progress of catalogs: messages translated, fuzzy, untranslated, and words."""
from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass

import polib

from .segment import count_words

__all__ = ["CatalogStats", "catalog_stats"]



@dataclass(frozen=True)
class CatalogStats:
    """Counts for one catalog (obsolete entries are not counted).

    Attributes:
        translated: messages with a usable translation (not fuzzy, not empty).
        fuzzy: messages whose English changed since they were translated.
        untranslated: messages with no usable translation (empty, or one the safety
            check of :mod:`po_i18n.safety` refuses, since both show in English).
        words: words of English in all messages.
        translated_words: words of English in the translated messages.
    """

    translated: int
    fuzzy: int
    untranslated: int
    words: int
    translated_words: int

    @property
    def total(self) -> int:
        return self.translated + self.fuzzy + self.untranslated

    @property
    def percent(self) -> float:
        """Share of the English words that are translated, 0-100 (100 for an empty catalog)."""
        return 100.0 if self.words == 0 else 100.0 * self.translated_words / self.words


def catalog_stats(catalog: polib.POFile, refused: Container[str] = frozenset()) -> CatalogStats:
    """Count a catalog's messages and words by state (gettext's translated/fuzzy/untranslated).

    Args:
        catalog: the catalog.
        refused: msgids whose translation the safety check refuses
            (:func:`po_i18n.check.refused_messages`); they count as untranslated.
    """
    translated = fuzzy = untranslated = words = done = 0
    for entry in catalog:
        if entry.obsolete or entry.msgctxt is not None:  # an entry with a context is not this site's message
            continue
        n = count_words(entry.msgid)
        words += n
        if entry.fuzzy:
            fuzzy += 1
        elif entry.translated() and entry.msgid not in refused:
            translated += 1
            done += n
        else:  # empty, or refused by the safety checks (it is shown in English)
            untranslated += 1
    return CatalogStats(translated, fuzzy, untranslated, words, done)
