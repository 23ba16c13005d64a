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
from babel.core import UnknownLocaleError
from babel.lists import format_list

from .catalog_header import CONTENT_TYPE, usable_plural_rule

__all__ = ["UIString", "STRINGS", "Interface", "interface_for"]


@dataclass(frozen=True)
class UIString:
    """One interface string: its English text, plural form and a note for translators.

    ``kind`` is where the string goes, for the safety check (:mod:`coursekit.safety`):
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


VERIFIED = UIString("Verified", "badge under a code block: the program shown passed its test as it is now")
VERIFIED_FAILS = UIString("Verified: fails as described",
                          "badge under the code of a 'break it' exercise: the program was run and failed exactly as the page says it does")
VERIFIED_HANGS = UIString("Verified: hangs as described",
                          "badge under the code of a 'break it' exercise: the program was run and blocked, as the page says, until it was stopped")
PROCESSES = UIString("%(count)d process", "badge: how many processes the torchrun job had", "%(count)d processes")
BACKEND_ON = UIString("%(backend)s on %(device)s", "badge: communication backend and device, e.g. 'gloo on CPU'")
BACKEND_ON_GPUS = UIString("%(backend)s on %(count)d CUDA GPU",
                           "badge: communication backend and how many CUDA GPUs the job used in all, e.g. 'NCCL on 2 CUDA GPUs'; "
                           "fewer GPUs than processes means processes shared a GPU",
                           "%(backend)s on %(count)d CUDA GPUs")
ON_SLURM = UIString("Slurm, %(count)d node", "badge: the program ran as a job of the Slurm cluster scheduler, on this many nodes",
                    "Slurm, %(count)d nodes")
ALSO_VERIFIED = UIString("also verified with %(run)s",
                         "badge: every test of the program also passed in a second setting; %(run)s is e.g. "
                         "'torchrun 1 process, NCCL on 1 CUDA GPU'")
ALSO_BARE = UIString("its bare runs also passed with %(run)s",
                     "badge: the program, launched exactly as shown but with fewer processes, also ran cleanly in a second "
                     "setting, without the tests of the lesson's claims; %(run)s is e.g. 'torchrun 1 process, NCCL on 1 CUDA GPU'")
NCCL_AWAITING = UIString("NCCL awaiting %(count)d CUDA GPU",
                         "badge: the program ran on CUDA over gloo with processes sharing GPUs; its NCCL path, which needs one "
                         "GPU per process, has not run yet",
                         "NCCL awaiting %(count)d CUDA GPUs")
NOT_VERIFIED = UIString("Not verified: this code has no passing run as it is now",
                        "badge under a code block whose program has no passing test run for its current content")
AWAITING_GPU = UIString("Awaiting GPU verification: needs %(count)d CUDA GPU",
                        "badge: the program needs CUDA GPUs and has not been run on them yet",
                        "Awaiting GPU verification: needs %(count)d CUDA GPUs")
OUTPUT_TITLE = UIString("Output of the verified run",
                        "title of the collapsed block under a launch command: what the program printed in the run that verified it")
OUTPUT_RANK = UIString("rank %(rank)d", "label above one part of the verified output: what one process (rank) printed")
OUTPUT_ATTEMPT = UIString("rank %(rank)d, attempt %(attempt)d",
                          "label above one part of the verified output when torchrun restarted the workers: one rank in one attempt (0 is the first)")
OUTPUT_NOTHING = UIString("This rank printed nothing.", "verified output: under the label of a rank that printed nothing")
OUTPUT_ORDER = UIString("The ranks print at the same time: in your terminal their lines can come in any order.",
                        "verified output: note above the per-rank parts")
OUTPUT_PLACEHOLDERS = UIString("Values that change from run to run are shown as:",
                               "verified output: followed by the placeholders used, e.g. `<port>`, `<pid>`")
HOW_VERIFIED = UIString("How the code on this site is verified", "tooltip of every verification badge")
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
QUIZ_CHECK = UIString("Check", "quick-check question: button that checks the chosen answer")
QUIZ_RIGHT = UIString("Right.", "quick-check question: feedback when the chosen answer is right")
QUIZ_WRONG = UIString("Not quite: the right answer is now marked.", "quick-check question: feedback when the chosen answer is wrong")
QUIZ_CHOOSE = UIString("Choose an answer first.", "quick-check question: feedback when Check is pressed with nothing chosen")
NOT_FOUND_TITLE = UIString("Page not found", "title of the 404 page", kind="plain text")
NOT_FOUND_TEXT = UIString("There is no page at this address. It may have moved, or the link may be mistyped.",
                          "text of the 404 page", kind="plain text")
NOT_FOUND_HOME = UIString("Go to the course home page", "link on the 404 page", kind="plain text")
PERCENT = UIString("%(percent)d%%", "a percentage in the translation status table, e.g. '85%'; write it as your language does",
                   kind="table cell")
PERMALINK = UIString("Permanent link", "tooltip of the ¶ link after every heading: the address of that section", kind="plain text")
MADE_WITH = UIString("Made with %(generator)s", "footer of every page; %(generator)s is the link 'Material for MkDocs' (a name, kept in English)",
                     kind="plain text")

STRINGS = (VERIFIED, VERIFIED_FAILS, VERIFIED_HANGS, PROCESSES, BACKEND_ON, BACKEND_ON_GPUS, ON_SLURM,
           ALSO_VERIFIED, ALSO_BARE, NCCL_AWAITING, NOT_VERIFIED, AWAITING_GPU, HOW_VERIFIED,
           OUTPUT_TITLE, OUTPUT_RANK, OUTPUT_ATTEMPT, OUTPUT_NOTHING, OUTPUT_ORDER, OUTPUT_PLACEHOLDERS,
           NOTICE_PARTIAL, NOTICE_LINK, STATUS_TITLE, STATUS_INTRO, STATUS_PAGE, STATUS_TRANSLATED,
           STATUS_FUZZY, STATUS_UNTRANSLATED, STATUS_NO_CATALOG, STATUS_LANGUAGE, PERCENT, QUIZ_CHECK, QUIZ_RIGHT, QUIZ_WRONG,
           QUIZ_CHOOSE, NOT_FOUND_TITLE, NOT_FOUND_TEXT, NOT_FOUND_HOME, PERMALINK, MADE_WITH)


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


class Interface:
    """The interface strings in one language.

    Args:
        catalog: the language's site catalog, or ``None`` for English. Fuzzy and empty
            entries are left out (polib's ``to_binary`` writes translated entries only),
            so they show in English.
        refused: msgids whose translation the safety check refuses
            (:func:`coursekit.check.refused_messages`); they show in English too.
    """

    def __init__(self, catalog: polib.POFile | None = None, refused: frozenset[str] = frozenset()) -> None:
        #: the catalog's ``Language`` header (``"en"`` for English): how lists are joined
        self.locale = ((catalog.metadata.get("Language") if catalog is not None else None) or "en").replace("-", "_")
        if catalog is None:
            self._t: gettext.NullTranslations = gettext.NullTranslations()
            return
        # gettext reads only a header written here: the text is UTF-8 (coursekit.catalog.load
        # decoded it so), and the plural rule is the catalog's only when it compiles and stays
        # in range (coursekit.catalog_header); otherwise plural messages show in English, and
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
            :func:`coursekit.check.format_problems` reports it, in ``course check``
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
            return format_list(items, locale=self.locale)
        except (UnknownLocaleError, ValueError, KeyError):
            return ", ".join(items)

    @staticmethod
    def before(label: str, rest: str) -> str:
        """``label`` followed by ``rest``, with a space between them unless the label ends
        in a full-width character (CJK punctuation such as "：" carries its own spacing)."""
        if label and unicodedata.east_asian_width(label[-1]) in ("F", "W"):
            return label + rest
        return f"{label} {rest}"
