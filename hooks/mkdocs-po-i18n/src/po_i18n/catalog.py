"""Read, write and merge the gettext catalogs (``.po``) translators edit, with polib.

Formats and rules follow the GNU gettext manual: "The Format of PO Files" (entries,
``#.`` extracted comments, ``#:`` references, ``#,`` flags, ``#|`` previous msgid,
``#~`` obsolete entries), "Invoking msgmerge" (how changed messages turn fuzzy), and
"Plural forms" (the ``Plural-Forms`` header; values from Babel's CLDR data).
"""
from __future__ import annotations

import copy
import difflib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polib
from babel.messages.plurals import get_plural

from . import catalog_cache, catalog_file
from .catalog_file import CatalogError, shown
from .filecache import StatCache

__all__ = [
    "CatalogError",
    "Message",
    "plural_forms",
    "load",
    "load_cached",
    "load_for_update",
    "shown",
    "key",
    "duplicates",
    "duplicate_reason",
    "message_line",
    "msgstr_lines",
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

    The file must be a catalog file (:func:`po_i18n.catalog_file.read`: a regular file,
    reached without a symbolic link, readable, at most
    :data:`~po_i18n.catalog_file.MAX_BYTES`), UTF-8 without a byte order mark (GNU
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
    catalog = catalog_cache.kept(raw)  # these bytes passed every check below before
    if catalog is not None:
        catalog.fpath = str(path)
        return catalog
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
    catalog_cache.keep(raw, catalog)
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


_KEYWORD_LINE = re.compile(r"^[ \t]*(?:#~[ \t]*)?(?:msgctxt|msgid)\b")
_PREVIOUS_LINE = re.compile(r'^[ \t]*#~\|[ \t]*(?:(?P<keyword>msgctxt|msgid_plural|msgid)[ \t]+)?"(?P<string>.*)"[ \t]*$')


def load_for_update(path: Path) -> polib.POFile:
    """:func:`load`, plus what polib 1.2 skips but ``po-i18n update`` must write back: the
    previous strings of obsolete entries (``#~| msgid "…"``, which ``msgmerge`` writes
    when it makes a fuzzy entry obsolete; gettext manual, "The Format of PO Files").

    Raises:
        CatalogError: as :func:`load`.
    """
    catalog = load(path)
    lines = catalog_file.read(path).decode("utf-8").splitlines()
    for entry in catalog:
        if not entry.obsolete:
            continue
        start = message_line(lines, entry) - 1
        first = start
        while first > 0 and lines[first - 1].lstrip().startswith("#~|"):
            first -= 1
        fields: dict[str, str] = {}
        name = None
        for line in lines[first:start]:
            match = _PREVIOUS_LINE.match(line)
            if match is None:
                continue
            name = match.group("keyword") or name
            if name is not None:
                fields[name] = fields.get(name, "") + polib.unescape(match.group("string"))
        entry.previous_msgctxt = fields.get("msgctxt", entry.previous_msgctxt)
        entry.previous_msgid = fields.get("msgid", entry.previous_msgid)
        entry.previous_msgid_plural = fields.get("msgid_plural", entry.previous_msgid_plural)
    return catalog


def key(entry: polib.POEntry) -> tuple[str | None, str]:
    """What identifies a message in a catalog: ``(msgctxt, msgid)``.

    The gettext manual ("The Format of PO Files"): entries with the same msgid and
    different contexts are different messages, and an empty context (``msgctxt ""``,
    here ``""``) is not an absent one (``None``).
    """
    return entry.msgctxt, entry.msgid


def duplicates(catalog: polib.POFile) -> list[tuple[polib.POEntry, polib.POEntry]]:
    """``(first, repeated)`` for every entry whose :func:`key` an earlier entry of the
    catalog already has, obsolete entries included.

    GNU ``msgfmt`` and ``msgmerge`` (gettext 0.21) refuse such a file ("duplicate message
    definition"), obsolete duplicates too; the manual's remedy ("Manipulating PO Files")
    is to unify them, which only the translator can do: which translation is meant?
    """
    seen: dict[tuple[str | None, str], polib.POEntry] = {}
    found = []
    for entry in catalog:
        first = seen.setdefault(key(entry), entry)
        if first is not entry:
            found.append((first, entry))
    return found


def duplicate_reason(lines: list[str], first: polib.POEntry, repeated: polib.POEntry) -> str:
    """The reason :func:`duplicates` gives for one pair, naming the first entry's line
    (``lines``: the catalog's text, split in lines)."""
    context = "" if repeated.msgctxt is None else f" with context {repeated.msgctxt[:40]!r}"
    return (f"duplicate msgid {repeated.msgid[:40]!r}{context}, also at line {message_line(lines, first)}; "
            "msgmerge and msgfmt refuse such a catalog: keep the entry with the translation you want and delete the other")


def message_line(lines: list[str], entry: polib.POEntry) -> int:
    """The 1-based line of an entry's first keyword (``msgctxt`` or ``msgid``, obsolete or
    not); polib's ``linenum`` is where the entry starts (its first comment)."""
    for number in range(max(entry.linenum, 1) - 1, len(lines)):
        if _KEYWORD_LINE.match(lines[number]):
            return number + 1
    return entry.linenum


def msgstr_lines(lines: list[str], entry: polib.POEntry) -> dict[int | None, int]:
    """The 1-based line of each msgstr keyword of an entry (``None`` for a singular one);
    polib's ``linenum`` is where the entry starts (its first comment)."""
    out: dict[int | None, int] = {}
    for number in range(entry.linenum - 1, len(lines)):
        line = lines[number].lstrip("#~ ")
        if line.startswith("msgstr["):
            out[int(line[7:line.index("]")])] = number + 1
        elif line.startswith("msgstr"):
            out[None] = number + 1
        elif out and not line.startswith('"'):
            break
    return out


def translations(catalog: polib.POFile | None) -> dict[str, str]:
    """The usable translations of a catalog: msgid -> msgstr.

    Messages are keyed by ``(msgctxt, msgid)`` (:func:`key`); this site writes no
    ``msgctxt``, so only entries without one are its messages (``po-i18n check`` reports
    the others). Fuzzy, obsolete and empty entries are left out: they render in English.
    """
    if catalog is None:
        return {}
    return {
        e.msgid: e.msgstr
        for e in catalog
        if e.msgstr and not e.obsolete and "fuzzy" not in e.flags and e.msgctxt is None
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


# Flags the extractor decides (gettext manual, "The Format of PO Files": ``c-format``,
# ``no-python-format``, ``possible-c-format``…, written by xgettext): every other flag
# (fuzzy, no-wrap, …) is the translator's and is kept.
_FORMAT_FLAG = re.compile(r"(?:no-|possible-)?[a-z0-9+-]+-format")


def _translator_flags(entry: polib.POEntry) -> list[str]:
    return [f for f in entry.flags if not _FORMAT_FLAG.fullmatch(f)]


def _translated(entry: polib.POEntry) -> bool:
    """Whether an entry holds any translated text (singular or any plural form)."""
    return bool(entry.msgstr or any(entry.msgstr_plural.values()))


def _written(entry: polib.POEntry) -> bool:
    """Whether a translator wrote anything in an entry: a translation, a comment or a
    flag of their own. An entry without any may be dropped when its message vanishes."""
    return _translated(entry) or bool(entry.tcomment) or bool(_translator_flags(entry))


def _joined(*comments: str) -> str:
    """Translator comments of entries merged into one, each kept once, in order."""
    return "\n".join(dict.fromkeys(c for c in comments if c))


def _merged_header(old: dict[str, str], language: str, project: str) -> dict[str, str]:
    """The header fields of an updated catalog: the translator's, every one of them, as
    they are (``msgmerge`` likewise keeps the PO file's header, ``Project-Id-Version``
    included; gettext manual, "Filling in the Header Entry"), and the fields the site
    needs added where they are missing. ``po-i18n check`` reports a field that is wrong
    for the language."""
    fields = dict(old)
    for name, value in _header(language, project).items():
        fields.setdefault(name, value)
    return fields


def _take(entry: polib.POEntry, prior: polib.POEntry, extracted_flags: tuple[str, ...]) -> None:
    """Give a fresh entry what a translator wrote in the catalog's entry for the same
    msgid: translation, translator comment, flags (the extractor's format flags win), and
    the previous msgid of a fuzzy entry. A changed ``msgid_plural`` turns the entry fuzzy;
    a message that became plural has its translation in every form, one that became
    singular keeps the first form (what msgmerge 0.21 does too)."""
    if entry.msgid_plural and prior.msgid_plural:
        entry.msgstr_plural = {int(k): v for k, v in prior.msgstr_plural.items()}
    elif entry.msgid_plural:
        entry.msgstr_plural = {i: prior.msgstr for i in entry.msgstr_plural}
    elif prior.msgid_plural:
        entry.msgstr = prior.msgstr_plural.get(0, "")
    else:
        entry.msgstr = prior.msgstr
    flags = [*extracted_flags, *_translator_flags(prior)]
    entry.previous_msgctxt = prior.previous_msgctxt
    entry.previous_msgid = prior.previous_msgid
    entry.previous_msgid_plural = prior.previous_msgid_plural
    if (prior.msgid_plural or None) != (entry.msgid_plural or None) and _translated(prior):
        flags.append("fuzzy")
        entry.previous_msgid, entry.previous_msgid_plural = prior.msgid, prior.msgid_plural or None
    entry.flags = list(dict.fromkeys(flags))
    entry.tcomment = prior.tcomment


def _suggest(entry: polib.POEntry, source: polib.POEntry, fuzzy: bool) -> None:
    """Offer an untranslated entry the translation of another message (a vanished one, or
    one of an orphaned catalog): exact (same msgid) as it is, close as fuzzy with the
    other English as ``#| msgid``. The entry's own comment and flags are kept."""
    if entry.msgid_plural:
        entry.msgstr_plural = {int(k): v for k, v in source.msgstr_plural.items()}
    else:
        entry.msgstr = source.msgstr
    entry.tcomment = _joined(entry.tcomment, source.tcomment)
    flags = [*entry.flags, *(f for f in _translator_flags(source) if f != "fuzzy")]
    if fuzzy:
        flags.append("fuzzy")
        entry.previous_msgid = source.msgid
    entry.flags = list(dict.fromkeys(flags))


def _closest(msgid: str, candidates: list[polib.POEntry]) -> polib.POEntry | None:
    """The candidate whose msgid is most similar to ``msgid``, if at least
    :data:`FUZZY_THRESHOLD` similar (difflib's ratio; the cheap upper bounds first, as
    ``difflib.get_close_matches`` does); the first of equals."""
    best, score = None, FUZZY_THRESHOLD
    matcher = difflib.SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(msgid)
    for candidate in candidates:
        matcher.set_seq1(candidate.msgid)
        if matcher.real_quick_ratio() < score or matcher.quick_ratio() < score:
            continue
        ratio = matcher.ratio()
        if ratio > score or (best is None and ratio >= score):
            best, score = candidate, ratio
    return best


def merge(old: polib.POFile | None, messages: Iterable[Message], language: str, project: str,
          compendium: Iterable[polib.POFile] = (), guide: str | None = None) -> polib.POFile:
    """Merge freshly extracted messages into a language's catalog, as ``msgmerge`` does
    (gettext manual, "Invoking the msgmerge Program"), losing nothing a translator wrote.

    Args:
        old: the current catalog, or ``None`` if the language has none yet. It must hold
            no two entries with the same :func:`key` (see :func:`duplicates`).
        messages: the messages of the English source, in page order (duplicates allowed).
        language: the catalog's locale (``"ru"``).
        project: the ``Project-Id-Version`` header value of a new catalog.
        compendium: other catalogs of the language whose translations are offered to
            untranslated messages (the catalogs of renamed or deleted pages), as
            ``msgmerge --compendium`` does (gettext manual, "Using Translation Compendia").

    Returns:
        A new catalog. The header keeps its comments, flags and every field
        (:func:`_merged_header`). Known messages keep their translation, translator
        comments and flags (the extractor's format flags replace the old ones). An
        untranslated message takes the translation of the same msgid in the compendium;
        else that of an entry with the same msgid and a ``msgctxt`` as fuzzy (``#|
        msgctxt`` names the context; the entry itself stays as it is); otherwise, when its English is close to a message that disappeared (or to one
        of the compendium), it takes that translation as fuzzy with ``#| msgid`` holding
        the old English. Messages no longer in the source become obsolete (``#~``) with
        their translator comments, when a translator wrote anything in them; entries with
        a ``msgctxt`` (which this site never writes) and obsolete entries stay as they
        are. The result depends only on the inputs.

    Raises:
        ValueError: ``old`` holds duplicate entries.
    """
    new = polib.POFile(wrapwidth=WRAP_WIDTH)
    new.metadata = _header(language, project)
    new.header = (f"{project}: '{language}' catalog. Translate msgstr only; keep code, links, markup and "
                  f"placeholders as they are{f'; see {guide}' if guide else ''}.")
    if old is not None:
        if duplicates(old):
            raise ValueError("the catalog holds duplicate entries; see catalog.duplicates")
        new.metadata = _merged_header(old.metadata, language, project)
        new.metadata_is_fuzzy = old.metadata_is_fuzzy
        new.header = old.header
    old_entries = list(old) if old is not None else []
    old_live = {key(e): e for e in old_entries if not e.obsolete and e.msgctxt is None}
    old_obsolete = {key(e): e for e in old_entries if e.obsolete}

    merged: dict[str, polib.POEntry] = {}
    comments: dict[str, list[str]] = {}
    for msg in messages:
        if msg.msgid in merged:
            if msg.comment not in comments[msg.msgid]:
                comments[msg.msgid].append(msg.comment)
            continue
        comments[msg.msgid] = [msg.comment]
        prior = old_live.get((None, msg.msgid)) or old_obsolete.get((None, msg.msgid))
        entry = polib.POEntry(msgid=msg.msgid, msgstr="")
        if msg.plural:
            entry.msgid_plural = msg.plural
            entry.msgstr_plural = {i: "" for i in range(_nplurals(language))}
        entry.flags = list(msg.flags)
        if prior is not None:
            _take(entry, prior, msg.flags)
        entry.occurrences = [(msg.reference, "")]
        merged[msg.msgid] = entry
    revived = {id(old_obsolete[(None, m)]) for m in merged if (None, m) in old_obsolete}

    # The compendium's translations, first catalog first: usable ones only.
    offered: dict[tuple[str, str | None], polib.POEntry] = {}
    for catalog in compendium:
        for e in catalog:
            if e.msgctxt is None and e.translated():
                offered.setdefault((e.msgid, e.msgid_plural or None), e)
    contexts = {(e.msgid, e.msgid_plural or None): e for e in old_entries
                if not e.obsolete and e.msgctxt is not None and e.translated()}
    # Messages that vanished: the closest one becomes a fuzzy suggestion for a new one.
    vanished = [e for k, e in old_live.items() if k[1] not in merged and e.msgstr and not e.msgid_plural]
    close = [e for (_, plural), e in offered.items() if plural is None]
    used: set[int] = set()
    for msgid, entry in merged.items():
        if _translated(entry):
            continue
        exact = offered.get((msgid, entry.msgid_plural or None))
        if exact is not None:
            _suggest(entry, exact, fuzzy=False)
            continue
        context = contexts.get((msgid, entry.msgid_plural or None))
        if context is not None:  # a translator's entry with a msgctxt: its text, as fuzzy, where it is shown
            _suggest(entry, context, fuzzy=True)
            entry.previous_msgctxt = context.msgctxt
            continue
        if entry.msgid_plural:
            continue
        best = _closest(msgid, [e for e in vanished if id(e) not in used] + close)
        if best is not None:
            _suggest(entry, best, fuzzy=True)
            used.add(id(best))

    for msgid, entry in merged.items():
        entry.comment = "; ".join(comments[msgid])
        if "fuzzy" not in entry.flags:
            entry.previous_msgctxt = entry.previous_msgid = entry.previous_msgid_plural = None
        new.append(entry)
    # Entries with a context: not this site's messages; kept as the translator left them.
    new.extend(e for e in old_entries if not e.obsolete and e.msgctxt is not None)

    for k, entry in old_live.items():
        if k[1] not in merged and id(entry) not in used and _written(entry):
            entry.obsolete = True
            entry.occurrences = []
            entry.comment = ""
            new.append(entry)
    new.extend(e for e in old_obsolete.values() if id(e) not in revived)
    return new


def _text(catalog: polib.POFile) -> str:
    """A catalog's text as polib writes it, except what polib 1.2 would change that
    ``msgmerge`` keeps: a translator comment (``#`` line) is written as it is, not
    re-wrapped at the line width; an entry flagged ``no-wrap`` is not wrapped (gettext
    manual, "The Format of PO Files"); the header keeps its own flags (polib writes any
    of them as ``fuzzy``)."""
    head = catalog.metadata_as_entry()
    flags = catalog.metadata_is_fuzzy
    head.flags = list(flags) if isinstance(flags, list) else (["fuzzy"] if flags else [])
    out = "".join("#\n" if not line else f"#{line}\n" if line[:1] in ",:" else f"# {line}\n"
                  for line in catalog.header.split("\n"))  # as polib writes the header comment
    entries = [head, *(e for e in catalog if not e.obsolete), *(e for e in catalog if e.obsolete)]
    return out + "\n".join(_entry_text(e) for e in entries)


def _entry_text(entry: polib.POEntry) -> str:
    """One entry as polib writes it, with its translator comment lines unwrapped, and
    its strings too if it is flagged ``no-wrap``."""
    width = 0 if "no-wrap" in entry.flags else WRAP_WIDTH
    if not entry.tcomment:
        return entry.__unicode__(width)
    bare = copy.copy(entry)
    bare.tcomment = ""
    lines = [f"# {line}" if line else "#" for line in entry.tcomment.split("\n")]
    return "\n".join([*lines, bare.__unicode__(width)])


def saved_text(catalog: polib.POFile) -> str:
    """The text :func:`save` writes for a catalog (str, ending in a line feed)."""
    text = _text(catalog)
    return text if text.endswith("\n") else text + "\n"


def differs(catalog: polib.POFile, path: Path) -> bool:
    """Whether :func:`save` would write ``path``: it is missing or holds other text than
    :func:`saved_text` of ``catalog``."""
    return not catalog_file.exists(path) or catalog_file.read(path) != saved_text(catalog).encode("utf-8")


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
            a directory; see :func:`po_i18n.catalog_file.write`) or cannot be written;
            nothing is written then.
    """
    if not differs(catalog, path):
        return False
    catalog_file.write(path, saved_text(catalog))
    return True
