"""Read, write and merge the gettext catalogs (``.po``) translators edit, with polib.

Formats and rules follow the GNU gettext manual: "The Format of PO Files" (entries,
``#.`` extracted comments, ``#:`` references, ``#,`` flags, ``#|`` previous msgid,
``#~`` obsolete entries), "Invoking msgmerge" (how changed messages turn fuzzy), and
"Plural forms" (the ``Plural-Forms`` header; values from Babel's CLDR data).
"""
from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polib
from babel.messages.plurals import get_plural

from . import catalog_file
from .catalog_file import CatalogError, shown
from .filecache import StatCache

__all__ = [
    "CatalogError",
    "Message",
    "plural_forms",
    "load",
    "load_cached",
    "shown",
    "merge",
    "save",
    "translations",
]

WRAP_WIDTH = 79  # GNU gettext tools' default line width, so editors and msgmerge agree


def plural_forms(language: str) -> str:
    """The ``Plural-Forms`` header value for a locale (``"ru"``), from Babel's CLDR-based
    table (``babel.messages.plurals``), the one ``pybabel init`` writes."""
    return get_plural(language).plural_forms


# msgmerge's fuzzy-match threshold: a changed message keeps the old translation as a
# suggestion when the two msgids are at least this similar.
FUZZY_THRESHOLD = 0.6


@dataclass(frozen=True)
class Message:
    """One message extracted from a source page.

    Attributes:
        msgid: the English text.
        comment: what the message is, shown to translators as ``#.``.
        reference: where it comes from, shown as ``#:`` (a path, no line number).
    """

    msgid: str
    comment: str
    reference: str
    plural: str | None = None
    flags: tuple[str, ...] = ()


_PREFIX = re.compile(r"^#(?:~\|?|\|)[ \t]*")  # obsolete (#~), previous (#|) and both (#~|)
_KEYWORD = re.compile(r"^(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)[ \t]+(?P<string>.*)$")
_STRING = re.compile(r'^"(?:[^"\\]|\\.)*"[ \t]*$')


# Characters a catalog's text may not hold: the Unicode control characters (category
# Cc, U+0000-U+001F and U+007F-U+009F: fixed by the standard's stability policy) but tab
# and line feed, a carriage return not ending a line, and the line and paragraph
# separators (U+2028, U+2029). So a catalog is text, and its lines are the lines gettext
# sees: every other character ``str.splitlines`` would break a line at is among these.
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]|\r(?!\n)")
_BOM = "\ufeff"


def _lex(text: str, path: Path) -> None:
    """Reject what polib would silently accept: every keyword and continuation line must
    hold exactly one well-terminated string (gettext manual, "The Format of PO Files").
    A reason names the line and what kind of thing is wrong, never the text: the file may
    not be a catalog at all."""
    for number, line in enumerate(text.splitlines(), 1):
        body = line.rstrip("\r")
        if not body.strip():
            continue
        if body.startswith("#"):
            if not _PREFIX.match(body):
                continue  # translator, extracted, reference and flag comments
            body = _PREFIX.sub("", body, count=1)
        keyword = _KEYWORD.match(body)
        string = keyword.group("string") if keyword else body.strip()
        if _STRING.match(string):
            continue
        if string.startswith('"'):
            raise CatalogError(path, number, "unterminated string; end it with a double quote (write \\\" for a quote inside)")
        if keyword:
            name = body.split("[", 1)[0].split(None, 1)[0]
            raise CatalogError(path, number, f"{name} is not followed by one quoted string; write it as {name} \"text\"")
        raise CatalogError(path, number, "a line that is not a comment (#), a keyword (msgid, msgstr…) with a quoted "
                           "string, or a quoted string; is a # or a quote missing, or is this not a catalog?")


# polib's syntax errors, by what they say after "(line N)"; any other is said in general
_POLIB_REASONS = {
    "unescaped double quote found": "a double quote inside a string; write it as \\\"",
    "invalid continuation line": "a previous-msgid line (#|) without a string",
}


def load(path: Path) -> polib.POFile:
    """Read a catalog.

    The file must be a catalog file (:func:`coursekit.catalog_file.read`: a regular file,
    reached without a symbolic link, readable, at most
    :data:`~coursekit.catalog_file.MAX_BYTES`), UTF-8 without a byte order mark (GNU
    ``msgfmt`` refuses one), text (:data:`_NOT_TEXT`) and PO syntax polib and
    ``msgfmt`` both accept.

    Args:
        path: the ``.po`` file.

    Returns:
        The parsed catalog (``polib.POFile``; ``fpath`` is ``path``).

    Raises:
        CatalogError: any of the above fails; the message names the file (and the line),
            the problem and the remedy, and quotes nothing of the file.
    """
    raw = catalog_file.read(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        declared = re.search(rb"charset\s*=\s*([\w.:-]+)", raw[:4096], re.I)
        convert = ("convert it with: msgconv --to-code=UTF-8" if declared and declared.group(1).lower() not in (b"utf-8", b"utf8")
                   else "save the catalog as UTF-8")
        raise CatalogError(path, line, f"not valid UTF-8; {convert}") from None
    if text.startswith(_BOM):
        raise CatalogError(path, 1, "starts with a UTF-8 byte order mark, which GNU msgfmt refuses; "
                                    "save the catalog as UTF-8 without BOM")
    found = _NOT_TEXT.search(text)
    if found:
        line = text.count("\n", 0, found.start()) + 1
        raise CatalogError(path, line, f"has the control character U+{ord(found.group()[0]):04X}, which a catalog's text "
                                       "cannot hold; remove it (is this a binary file?)")
    _lex(text, path)
    if os.path.lexists(text):  # polib.pofile reads a string that names a file as that file
        raise CatalogError(path, 1, "cannot be parsed; is this a catalog?")
    try:
        catalog = polib.pofile(text, encoding="utf-8", wrapwidth=WRAP_WIDTH)
    except (OSError, ValueError) as exc:
        match = re.search(r"\(line (\d+)\)(?::\s*(.*))?", str(exc))
        line = int(match.group(1)) if match else 1
        reason = _POLIB_REASONS.get(match.group(2) if match else "",
                                    "an entry out of order (an entry is: comments, msgctxt, msgid, msgid_plural, "
                                    "then msgstr or msgstr[N])")
        raise CatalogError(path, line, f"{reason}; fix the entry (an editor such as Poedit shows it)") from None
    catalog.fpath = str(path)
    return catalog


def load_cached(path: Path) -> polib.POFile | None:
    """:func:`load`, cached by modification time and size (``None`` when nothing is at
    ``path``: a link, even a dangling one, or a directory is read, and refused).

    For readers that do not change the catalog (rendering, status pages, badges): a
    build renders each catalog's page several times, once per hook and language.

    Raises:
        CatalogError: as :func:`load`; the place is checked on every call (a catalog
            replaced by a link is refused even when its target has the old stamp).
    """
    if not catalog_file.exists(path):
        return None
    if catalog_file.place_problem(path):
        return load(path)  # raises, naming the problem
    return _loaded(path)


_loaded = StatCache(load)


def translations(catalog: polib.POFile | None) -> dict[str, str]:
    """The usable translations of a catalog: msgid -> msgstr.

    Fuzzy, obsolete and empty entries are left out: they render in English.
    """
    if catalog is None:
        return {}
    return {
        e.msgid: e.msgstr
        for e in catalog
        if e.msgstr and not e.obsolete and "fuzzy" not in e.flags
    }


def _nplurals(language: str) -> int:
    return get_plural(language).num_plurals


def _header(language: str, project: str) -> dict[str, str]:
    return {
        "Project-Id-Version": project,
        "Language": language,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "Plural-Forms": plural_forms(language),
    }


def merge(old: polib.POFile | None, messages: Iterable[Message], language: str, project: str) -> polib.POFile:
    """Merge freshly extracted messages into a language's catalog, as ``msgmerge`` does.

    Args:
        old: the current catalog, or ``None`` if the language has none yet.
        messages: the messages of the English source, in page order (duplicates allowed).
        language: the catalog's locale (``"ru"``).
        project: the ``Project-Id-Version`` header value.

    Returns:
        A new catalog: known messages keep their entry (translation, flags, translator
        comments); a new message whose English is close to a message that disappeared
        takes that translation as fuzzy with ``#| msgid`` holding the old English; other
        new messages are empty; messages no longer in the source become obsolete
        (``#~``), never deleted. The result depends only on the inputs.
    """
    new = polib.POFile(wrapwidth=WRAP_WIDTH)
    new.metadata = _header(language, project)
    new.header = f"{project}: '{language}' catalog. Translate msgstr only; see i18n/README.md."
    if old is not None:
        for key in ("PO-Revision-Date", "Last-Translator", "Language-Team"):
            if key in old.metadata:
                new.metadata[key] = old.metadata[key]
        new.header = old.header
    old_live = {e.msgid: e for e in old if not e.obsolete} if old is not None else {}
    old_obsolete = {e.msgid: e for e in old if e.obsolete} if old is not None else {}

    merged: dict[str, polib.POEntry] = {}
    comments: dict[str, list[str]] = {}
    for msg in messages:
        if msg.msgid in merged:
            if msg.comment not in comments[msg.msgid]:
                comments[msg.msgid].append(msg.comment)
            continue
        comments[msg.msgid] = [msg.comment]
        prior = old_live.get(msg.msgid) or old_obsolete.get(msg.msgid)
        entry = polib.POEntry(msgid=msg.msgid, msgstr="")
        if msg.plural:
            entry.msgid_plural = msg.plural
            entry.msgstr_plural = {i: "" for i in range(_nplurals(language))}
        entry.flags = list(msg.flags)
        if prior is not None and (prior.msgid_plural or None) == (msg.plural or None):
            entry.msgstr = prior.msgstr
            if msg.plural:
                entry.msgstr_plural = {int(k): v for k, v in prior.msgstr_plural.items()}
            entry.flags = list(dict.fromkeys([*msg.flags, *(f for f in prior.flags if f == "fuzzy")]))
            entry.tcomment = prior.tcomment
            entry.previous_msgid = prior.previous_msgid
        entry.occurrences = [(msg.reference, "")]
        merged[msg.msgid] = entry

    # Messages that vanished: the closest one becomes a fuzzy suggestion for a new one.
    vanished = [e for m, e in old_live.items() if m not in merged and e.msgstr and not e.msgid_plural]
    for msgid, entry in merged.items():
        if entry.msgstr or entry.msgid_plural or not vanished:
            continue
        best, score = None, 0.0
        for candidate in vanished:
            ratio = difflib.SequenceMatcher(None, candidate.msgid, msgid, autojunk=False).ratio()
            if ratio > score:
                best, score = candidate, ratio
        if best is not None and score >= FUZZY_THRESHOLD:
            entry.msgstr = best.msgstr
            entry.previous_msgid = best.msgid
            entry.tcomment = best.tcomment
            if "fuzzy" not in entry.flags:
                entry.flags.append("fuzzy")
            vanished.remove(best)

    for msgid, entry in merged.items():
        entry.comment = "; ".join(comments[msgid])
        if "fuzzy" not in entry.flags:
            entry.previous_msgid = None
        new.append(entry)

    used = {e.previous_msgid for e in merged.values() if e.previous_msgid}
    for msgid, entry in old_live.items():
        if msgid not in merged and msgid not in used and (entry.msgstr or any(entry.msgstr_plural.values())):
            entry.obsolete = True
            entry.occurrences = []
            entry.comment = ""
            entry.previous_msgid = None
            new.append(entry)
    for msgid, entry in old_obsolete.items():
        if msgid not in merged:
            new.append(entry)
    return new


def save(catalog: polib.POFile, path: Path) -> bool:
    """Write a catalog if its text changed.

    Args:
        catalog: the catalog to write.
        path: the ``.po`` file; parent folders are created.

    Returns:
        True when the file was written, False when it already held exactly this text
        (so running the update twice touches nothing).

    Raises:
        CatalogError: ``path`` is no place for a catalog (a link, or reached through one;
            a directory; see :func:`coursekit.catalog_file.write`) or cannot be written;
            nothing is written then.
    """
    text = str(catalog)
    if not text.endswith("\n"):
        text += "\n"
    if catalog_file.exists(path) and catalog_file.read(path) == text.encode("utf-8"):
        return False
    catalog_file.write(path, text)
    return True
