"""Read, write and merge the gettext catalogs (``.po``) translators edit, with polib.

Formats and rules follow the GNU gettext manual: "The Format of PO Files" (entries,
``#.`` extracted comments, ``#:`` references, ``#,`` flags, ``#|`` previous msgid,
``#~`` obsolete entries), "Invoking msgmerge" (how changed messages turn fuzzy), and
"Plural forms" (the ``Plural-Forms`` header; values from Babel's CLDR data).
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import polib
from babel.messages.plurals import get_plural
from mkdocs.exceptions import PluginError

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


class CatalogError(PluginError):
    """A catalog cannot be read: ``str(error)`` is ``file:line: reason; remedy``.

    A :class:`mkdocs.exceptions.PluginError`, so a hook can let it pass: MkDocs stops the
    build with the message and no traceback.

    Attributes:
        path: the catalog file (``pathlib.Path``).
        line: the 1-based line of the problem.
        reason: what is wrong and the remedy, without the ``file:line:`` prefix.
    """

    def __init__(self, path: Path, line: int, reason: str) -> None:
        self.path, self.line, self.reason = Path(path), int(line), reason
        super().__init__(f"{shown(path)}:{line}: {reason}")


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


def shown(path: Path) -> str:
    """How messages name a file: relative to the working directory when it lies under it
    (``i18n/ru/ddp-basics.po``), else as given."""
    try:
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return str(path)


def _lex(text: str, path: Path) -> None:
    """Reject what polib would silently accept: every keyword and continuation line must
    hold exactly one well-terminated string (gettext manual, "The Format of PO Files")."""
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
        raise CatalogError(path, number, f"unexpected text {body.strip()[:30]!r}; "
                           "each line must be a comment, a keyword (msgid, msgstr…) with a quoted string, or a quoted string")


def load(path: Path) -> polib.POFile:
    """Read a catalog.

    Args:
        path: the ``.po`` file.

    Returns:
        The parsed catalog (``polib.POFile``).

    Raises:
        CatalogError: the file is not valid UTF-8 or not valid PO syntax; the message
            names the file and line.
    """
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CatalogError(path, line, "not valid UTF-8; save the catalog as UTF-8") from None
    _lex(text, path)
    try:
        return polib.pofile(str(path), encoding="utf-8", wrapwidth=WRAP_WIDTH)
    except (OSError, ValueError) as exc:
        match = re.search(r"line (\d+)", str(exc))
        line = match.group(1) if match else "1"
        reason = re.sub(r"\s*\(line \d+\)", "", str(exc)).strip() or "cannot be parsed"
        raise CatalogError(path, line, f"{reason}; fix the entry (an editor such as Poedit shows it)") from None


def load_cached(path: Path) -> polib.POFile | None:
    """:func:`load`, cached by modification time and size (None when the file is missing).

    For readers that do not change the catalog (rendering, status pages, badges): a
    build renders each catalog's page several times, once per hook and language.
    """
    return _loaded(path) if path.is_file() else None


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
    """
    text = str(catalog)
    if not text.endswith("\n"):
        text += "\n"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True
