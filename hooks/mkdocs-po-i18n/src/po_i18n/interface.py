"""Interface strings the hooks write into pages (badges, notices, status page), translated
through each language's ``i18n/<lang>/_site.po`` with the standard library's gettext.

Plural messages use the catalog's own ``Plural-Forms`` rule, as GNU gettext's
``ngettext`` does (gettext manual, "Additional functions for plural forms"). Python
``%(name)s`` placeholders carry the ``python-format`` flag, so ``msgfmt --check``
verifies a translation keeps them.
"""
from __future__ import annotations

import gettext
import io
import unicodedata
from dataclasses import dataclass

import polib
from babel.core import Locale, UnknownLocaleError
from babel.lists import format_list

from .catalog_header import CONTENT_TYPE, usable_plural_rule

__all__ = ["UIString", "STRINGS", "Interface", "interface_for"]


@dataclass(frozen=True)
class UIString:
    """One interface string: its English text, plural form and a note for translators.

    ``kind`` is where the string goes, for the safety check (:mod:`po_i18n.safety`):
    a paragraph, heading or table cell of Markdown, or ``"plain text"`` for strings that
    templates write into the HTML as they are.
    """

    msgid: str
    comment: str
    plural: str | None = None
    kind: str = "paragraph"

    @property
    def flags(self) -> tuple[str, ...]:
        return ("python-format",) if "%(" in self.msgid else ()


NOTICE_PARTIAL = UIString("%(percent)d%% of this page is translated. The rest is shown in English until a translator updates it.",
                          "notice at the top of a page whose translation is incomplete or outdated")
NOTICE_LINK = UIString("Read the English original", "link in the incomplete-translation notice")
STATUS_TITLE = UIString("Translation status", "title of the generated translation status page", kind="heading")
STATUS_INTRO = UIString("How much of each page is translated into this language. Outdated and untranslated paragraphs are shown in English until they are translated.",
                        "first paragraph of the translation status page")
STATUS_PAGE = UIString("Page", "translation status table: column header", kind="table header")
STATUS_TRANSLATED = UIString("Translated", "translation status table: column header (percentage of words)", kind="table header")
STATUS_FUZZY = UIString("Outdated", "translation status table: column header (fuzzy messages whose English changed)",
                        kind="table header")
STATUS_UNTRANSLATED = UIString("Untranslated", "translation status table: column header (messages with no translation)",
                               kind="table header")
STATUS_NO_CATALOG = UIString("no catalog", "translation status table: in the Untranslated column of a page that has no "
                             "catalog in this language yet, so the whole page is shown in English", kind="table cell")
STATUS_LANGUAGE = UIString("Language", "translation status table on the English site: column header", kind="table header")
PERCENT = UIString("%(percent)d%%", "a percentage in the translation status table, e.g. '85%'; write it as your language does",
                   kind="table cell")
PERMALINK = UIString("Permanent link", "tooltip of the ¶ link after every heading: the address of that section", kind="plain text")

STRINGS = (NOTICE_PARTIAL, NOTICE_LINK, STATUS_TITLE, STATUS_INTRO, STATUS_PAGE, STATUS_TRANSLATED, STATUS_FUZZY, STATUS_UNTRANSLATED, STATUS_NO_CATALOG, STATUS_LANGUAGE, PERCENT, PERMALINK)


_by_catalog: dict[tuple[int, frozenset], tuple[object, "Interface"]] = {}


def interface_for(catalog: polib.POFile | None, refused: frozenset[str] = frozenset()) -> "Interface":
    """The :class:`Interface` of a catalog, built once per catalog object and set of
    refused msgids (``None``: English)."""
    key = (id(catalog), refused)
    hit = _by_catalog.get(key)
    if hit is None or hit[0] is not catalog:
        hit = (catalog, Interface(catalog, refused))
        _by_catalog[key] = hit
    return hit[1]


_LOCALES: dict[str, Locale] = {}


class Interface:
    """The interface strings in one language.

    Args:
        catalog: the language's site catalog, or ``None`` for English. Fuzzy and empty
            entries are left out (polib's ``to_binary`` writes translated entries only),
            so they show in English.
        refused: msgids whose translation the safety check refuses
            (:func:`po_i18n.check.refused_messages`); they show in English too.
    """

    def __init__(self, catalog: polib.POFile | None = None, refused: frozenset[str] = frozenset()) -> None:
        #: the catalog's ``Language`` header (``"en"`` for English): how lists are joined
        self.locale = ((catalog.metadata.get("Language") if catalog is not None else None) or "en").replace("-", "_")
        if catalog is None:
            self._t: gettext.NullTranslations = gettext.NullTranslations()
            return
        # gettext reads only a header written here: the text is UTF-8 (po_i18n.catalog.load
        # decoded it so), and the plural rule is the catalog's only when it compiles and stays
        # in range (po_i18n.catalog_header); otherwise plural messages show in English, and
        # so do those whose forms are not msgstr[0] to msgstr[nplurals - 1].
        rule = usable_plural_rule(catalog)
        kept = polib.POFile()
        kept.metadata = {"Content-Type": CONTENT_TYPE, **({"Plural-Forms": rule.value} if rule else {})}
        kept.extend(e for e in catalog if e.msgid and e.msgid not in refused and (
            not e.msgid_plural or (rule is not None and sorted(e.msgstr_plural) == list(range(rule.nplurals)))))
        self._t = gettext.GNUTranslations(io.BytesIO(kept.to_binary()))

    def text(self, s: UIString, count: int | None = None, **values) -> str:
        """Translate and fill one string.

        Args:
            s: the string.
            count: for plural strings, the number that chooses the form (also given to
                the placeholders as ``count``).
            **values: the other ``%(name)s`` placeholders.

        Returns:
            The translation, or the English when the translation is missing or its
            placeholders do not fit (a broken translation never breaks a page;
            :func:`po_i18n.check.format_problems` reports it, in ``po-i18n check``
            and as a build warning).
        """
        if count is not None:
            values["count"] = count
        english = s.msgid if s.plural is None or count == 1 else s.plural
        try:
            translated = self._t.ngettext(s.msgid, s.plural, count) if s.plural else self._t.gettext(s.msgid)
        except ZeroDivisionError:  # a plural rule that divides by zero for a count no check tried
            translated = english
        for candidate in (translated, english):
            try:
                return candidate % values if s.flags else candidate
            except (KeyError, ValueError, TypeError):
                continue
        return english

    def join_list(self, items: list[str]) -> str:
        """``items`` joined as a list in this language, by the CLDR list patterns
        (Babel's ``format_list``, standard style): "a, b, and c" in English, "a、b、c" in
        Japanese, "a, b и c" in Russian. The items are kept as they are (Markdown code
        spans included); a locale CLDR does not know joins them with ", "."""
        try:
            return format_list(items, locale=self._babel_locale())
        except (UnknownLocaleError, ValueError, KeyError):
            return ", ".join(items)

    def _babel_locale(self) -> Locale:
        """The Babel locale, parsed once per process (a new ``Locale`` reads and merges its
        CLDR data again, and a build makes an interface per language and hook)."""
        found = _LOCALES.get(self.locale)
        if found is None:
            found = _LOCALES[self.locale] = Locale.parse(self.locale)
        return found

    @staticmethod
    def before(label: str, rest: str) -> str:
        """``label`` followed by ``rest``, with a space between them unless the label ends
        in a full-width character (CJK punctuation such as "：" carries its own spacing)."""
        if label and unicodedata.east_asian_width(label[-1]) in ("F", "W"):
            return label + rest
        return f"{label} {rest}"
