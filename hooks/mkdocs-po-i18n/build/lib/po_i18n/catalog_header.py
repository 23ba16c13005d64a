"""A catalog's header entry, checked as the build uses it.

The build reads a catalog's text as UTF-8 and chooses plural forms of the interface
strings with the standard library's gettext (``GNUTranslations``), which compiles the
``Plural-Forms`` expression with :func:`gettext.c2py`. So ``po-i18n check`` (and every
build, as warnings) requires what that needs, by allowlist: one header entry; a
``Language`` that is the catalog folder's; ``Content-Type: text/plain; charset=UTF-8``;
``Plural-Forms: nplurals=N; plural=EXPRESSION;`` whose expression ``c2py`` compiles and
whose value, for every ``n`` of :data:`SAMPLE_N`, is a form below ``N``, with ``N`` the
locale's number of forms in CLDR (through Babel). Formats: gettext manual, "Header
Entry" and "Plural forms"; Python's ``gettext`` documentation.

Reasons never quote the header's values: they name the field and give the line to write.
"""
from __future__ import annotations

import codecs
import gettext
import re
from collections.abc import Callable
from dataclasses import dataclass

import polib
from babel.core import UnknownLocaleError
from babel.messages.plurals import get_plural

__all__ = ["HeaderError", "PluralRule", "SAMPLE_N", "header_problems", "plural_rule", "usable_plural_rule"]

CONTENT_TYPE = "text/plain; charset=UTF-8"

# The numbers every plural expression is evaluated for: all of 0..1000 (every last two
# and three digits, which the CLDR rules look at), then powers of ten and the edges of
# C's integer types. A count on this site (processes, GPUs, nodes, a percentage) is
# far below 1000; the large ones catch expressions that break only there.
SAMPLE_N = (*range(1001), *(10**k + d for k in range(4, 19) for d in (-1, 0, 1)),
            2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**63 - 1, 2**64 - 1)

_PLURAL_FORMS = re.compile(r"\s*nplurals\s*=\s*(?P<n>\d+)\s*;\s*plural\s*=(?P<expression>[^;]*);?\s*")
_MAX_NPLURALS = 6  # CLDR's most (zero, one, two, few, many, other), as in Arabic


class HeaderError(ValueError):
    """A ``Plural-Forms`` value the build cannot use; ``str(error)`` says why, without
    quoting it."""


@dataclass(frozen=True)
class PluralRule:
    """A ``Plural-Forms`` value that compiles and stays in range.

    Attributes:
        nplurals: how many forms a plural message has.
        plural: the compiled expression: a count -> the form to use (``0 <= form < nplurals``
            for every ``n`` of :data:`SAMPLE_N`).
        value: the header value as gettext writes it (``nplurals=N; plural=EXPRESSION;``),
            which Python's ``GNUTranslations`` reads as the build does.
    """

    nplurals: int
    plural: Callable[[int], int]
    value: str


def plural_rule(value: str) -> PluralRule:
    """Compile and try a ``Plural-Forms`` header value, as the build will use it.

    Args:
        value: ``"nplurals=3; plural=n % 10 == 1 && n % 100 != 11 ? 0 : ...;"``.

    Returns:
        The :class:`PluralRule`.

    Raises:
        HeaderError: it is not ``nplurals=N; plural=EXPRESSION;``, N is not 1 to 6,
            :func:`gettext.c2py` refuses the expression, or for some ``n`` of
            :data:`SAMPLE_N` it divides by zero or gives a form outside ``0..N-1``.
    """
    match = _PLURAL_FORMS.fullmatch(value)
    if not match:
        raise HeaderError("is not of the form 'nplurals=N; plural=EXPRESSION;'")
    digits = match["n"].lstrip("0")
    nplurals = int(digits) if 0 < len(digits) <= 2 else 0
    if not 1 <= nplurals <= _MAX_NPLURALS:
        raise HeaderError(f"must have nplurals from 1 to {_MAX_NPLURALS} (CLDR has no language with more forms)")
    expression = match["expression"].strip()
    try:
        plural = gettext.c2py(expression)
    except ValueError as exc:
        # c2py's messages quote the token it stopped at; only the ones that quote nothing are kept
        detail = str(exc) if ":" not in str(exc) else "a token that is not part of C's plural expressions"
        raise HeaderError(f"has a plural expression that Python's gettext cannot compile ({detail})") from None
    for n in SAMPLE_N:
        try:
            form = plural(n)
        except ZeroDivisionError:
            raise HeaderError(f"has a plural expression that divides by zero for n = {n}") from None
        if not 0 <= form < nplurals:
            raise HeaderError(f"has a plural expression that gives form {form} for n = {n}, "
                              f"but forms are 0 to {nplurals - 1} (nplurals={nplurals})") from None
    return PluralRule(nplurals, plural, f"nplurals={nplurals}; plural={expression};")


def usable_plural_rule(catalog: polib.POFile) -> PluralRule | None:
    """The catalog's plural rule when the build can use it, else ``None`` (its plural
    messages then show in English; ``po-i18n check`` says why)."""
    value = catalog.metadata.get("Plural-Forms")
    if value is None:
        return None
    try:
        return plural_rule(value)
    except HeaderError:
        return None


def _header_lines(text: str) -> tuple[int, dict[str, int], list[int]]:
    """Where the header is in a catalog's text: the line of its ``msgid ""``, the line of
    each field (``{"Plural-Forms": 9}``, the first of each), and the lines of every
    entry with an empty msgid and no context (more than one is a duplicate header)."""
    lines = text.splitlines()
    headers = [i + 1 for i, line in enumerate(lines)
               if line.rstrip() == 'msgid ""' and not (i and lines[i - 1].startswith("msgctxt"))
               and i + 1 < len(lines) and lines[i + 1].startswith("msgstr")]
    fields: dict[str, int] = {}
    if headers:
        for number in range(headers[0] + 1, len(lines) + 1):
            line = lines[number - 1]
            if not line.strip() or line.startswith(("#", "msgid", "msgctxt")):
                break
            found = re.match(r'\s*"([A-Za-z][A-Za-z-]*)\s*:', line)
            if found:
                fields.setdefault(found.group(1), number)
    return (headers[0] if headers else 1), fields, headers


def header_problems(catalog: polib.POFile, language: str, text: str) -> list[tuple[int, str]]:
    """Why a catalog's header is not what the build needs, as ``(line, reason; remedy)``.

    Args:
        catalog: the parsed catalog.
        language: the locale of its folder (``"ru"`` for ``i18n/ru/...``).
        text: its text, for the lines of the header's fields.

    Returns:
        One ``(line, reason)`` per problem, in header order; empty when the header is fine.
        A reason names the field and the line to write, never the value found.
    """
    start, fields, headers = _header_lines(text)
    meta = catalog.metadata
    restore = f"restore it with: po-i18n update --lang {language}"
    if not meta:
        return [(1, f'missing header entry (msgid ""); {restore}')]
    if len(headers) > 1:  # which one's fields count is up to the reader (polib takes the last): say only this
        return [(line, 'a second header entry (msgid ""); a catalog has one: merge the two and delete this one')
                for line in headers[1:]]
    out: list[tuple[int, str]] = []

    def field(name: str, problem: str, write: str) -> None:
        out.append((fields.get(name, start), f"header {name} {problem}; write: \"{name}: {write}\\n\""))

    if "Language" not in meta:
        field("Language", "is missing", language)
    elif meta["Language"].strip() != language:
        field("Language", f"is not '{language}', the language of the folder it is in", language)

    content_type = meta.get("Content-Type")
    charset = re.search(r"charset\s*=\s*([\w.:-]+)", content_type or "", re.I)
    if content_type is None:
        field("Content-Type", "is missing", CONTENT_TYPE)
    elif charset is None:
        field("Content-Type", "names no charset", CONTENT_TYPE)
    else:
        try:
            known = codecs.lookup(charset.group(1)).name
        except LookupError:
            field("Content-Type", "names a charset that Python does not know", CONTENT_TYPE)
        else:
            if known != "utf-8":
                field("Content-Type", "names a charset other than UTF-8, and catalogs here are read as UTF-8 "
                      "(convert one that is not with: msgconv --to-code=UTF-8)", CONTENT_TYPE)

    try:
        expected = get_plural(language)
    except UnknownLocaleError:
        expected = None  # Babel has no rule to compare with; the expression is still tried
    write = expected.plural_forms if expected else "nplurals=N; plural=EXPRESSION;"
    value = meta.get("Plural-Forms")
    if value is None:
        field("Plural-Forms", "is missing", write)
    else:
        try:
            rule = plural_rule(value)
        except HeaderError as exc:
            field("Plural-Forms", str(exc), write)
        else:
            if expected is not None and rule.nplurals != expected.num_plurals:
                field("Plural-Forms", f"says nplurals={rule.nplurals}, but '{language}' has {expected.num_plurals} "
                      "plural forms (CLDR, through Babel)", write)
    return out
