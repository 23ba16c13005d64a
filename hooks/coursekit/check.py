"""``course check``: validate every catalog, one ``file:line: problem`` line per problem.

Checks (gettext manual, "The Format of PO Files" and "Invoking the msgfmt Program"):
syntax and encoding, line ends, the ``Language``/``Plural-Forms``/``Content-Type``
headers, duplicate msgids, msgids that are not in the English source (hand-edited),
plural forms count, ``python-format`` placeholders (as ``msgfmt --check-format`` would,
but for Python's ``%(name)s`` syntax) and the safety of every translation
(:mod:`coursekit.safety`).
Optionally each file is also given to GNU ``msgfmt --check``.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

from babel.messages.plurals import get_plural

from . import catalog as po
from .extract import page_messages, site_messages
from .project import Project
from .safety import problems as safety_problems
from .segment import syntax_warnings

__all__ = ["check_catalog", "check_project", "format_problems", "msgfmt_check", "page_warnings", "translation_warnings"]


def _language_and_page(project: Project, path: Path) -> tuple[str, Path]:
    """``i18n/<language>/<page>.po`` -> ``(language, page.po)``, nested pages included."""
    language, *page = path.relative_to(project.i18n_dir).parts
    return language, Path(*page)


def _expected_msgids(project: Project, path: Path) -> set[str] | None:
    language, rel = _language_and_page(project, path)
    if path == project.site_catalog_path(language):
        return {m.msgid for m in site_messages(project)}
    page = rel.with_suffix(".md")
    if not (project.docs_dir / page).is_file():
        return None
    return {m.msgid for m in page_messages(project, page)}


_PLACEHOLDER = re.compile(r"%(?:\((?P<name>\w+)\))?[#0 +-]*\d*(?:\.\d+)?(?P<conv>[diouxXeEfFgGcrsa%])")


def format_problems(msgid: str, msgstr: str) -> list[str]:
    """Why a ``python-format`` msgstr would not fill as its msgid does.

    Every ``%(name)x`` of the msgid must appear in the msgstr and no other name may;
    filling the msgstr with the msgid's names must work (Python's printf-style
    formatting, https://docs.python.org/3/library/stdtypes.html#printf-style-string-formatting;
    a bare ``%`` must be written ``%%``).

    Args:
        msgid: the English string (singular or plural).
        msgstr: one translated form.

    Returns:
        One phrase per problem; empty when the msgstr fills correctly.
    """
    names = {m.group("name"): m.group(0) for m in _PLACEHOLDER.finditer(msgid) if m.group("name")}
    used = {m.group("name"): m.group(0) for m in _PLACEHOLDER.finditer(msgstr) if m.group("name")}
    found = [f"placeholder {used[n]} is not in the msgid; use one of: "
             + (", ".join(names[x] for x in sorted(names)) or "none") for n in sorted(used.keys() - names.keys())]
    found += [f"placeholder {names[n]} of the msgid is missing" for n in sorted(names.keys() - used.keys())]
    if not found:
        try:
            msgstr % {n: 1 for n in names}
        except (ValueError, TypeError, KeyError) as exc:
            found.append(f"does not fill as a Python format ({exc}); write a literal % as %%")
    return found


def _msgstr_lines(lines: list[str], entry) -> dict[int | None, int]:
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


def check_catalog(project: Project, path: Path) -> list[str]:
    """Problems of one catalog, each ``path:line: message; remedy``.

    Args:
        project: the project (for the English source and the expected language).
        path: ``i18n/<lang>/<page>.po``.

    Returns:
        The problem lines; empty when the catalog is fine.
    """
    shown = path.relative_to(project.root) if path.is_relative_to(project.root) else path
    raw = path.read_bytes()
    out: list[str] = []
    if b"\r\n" in raw:
        line = raw[: raw.index(b"\r\n")].count(b"\n") + 1
        out.append(f"{shown}:{line}: CRLF line ends; save the catalog with LF (Unix) line ends")
    try:
        catalog = po.load_cached(path)
    except po.CatalogError as exc:
        return out + [f"{shown}:{exc.line}: {exc.reason}"]
    language = _language_and_page(project, path)[0]
    meta = catalog.metadata
    if not meta:
        return out + [f"{shown}:1: missing header entry (msgid \"\"); restore it with: course update --lang {language}"]
    if meta.get("Language") != language:
        out.append(f"{shown}:1: header Language is {meta.get('Language')!r}, expected {language!r}; fix the header")
    if "charset=utf-8" not in meta.get("Content-Type", "").lower().replace(" ", ""):
        out.append(f"{shown}:1: header Content-Type must say charset=UTF-8")
    expected_plural = get_plural(language)
    forms = meta.get("Plural-Forms", "")
    if f"nplurals={expected_plural.num_plurals}" not in forms.replace(" ", ""):
        out.append(f"{shown}:1: header Plural-Forms {forms!r} is wrong for {language!r}; expected {expected_plural.plural_forms!r}")
    live = [e for e in catalog if not e.obsolete]
    for msgid, n in Counter((e.msgctxt, e.msgid) for e in live).items():
        if n > 1:
            dup = [e for e in live if (e.msgctxt, e.msgid) == msgid][1]
            out.append(f"{shown}:{dup.linenum}: duplicate msgid {msgid[1][:40]!r}; merge the two entries")
    expected = _expected_msgids(project, path)
    lines = raw.decode("utf-8").splitlines()
    for entry in live:
        where = f"{shown}:{entry.linenum}"
        if expected is not None and entry.msgid not in expected:
            out.append(f"{where}: msgid {entry.msgid[:40]!r} is not in the English source (was it edited by hand?); "
                       "restore it, and run: course update")
        if entry.fuzzy:
            continue  # not used until a translator confirms it; checked then
        if entry.msgid_plural:
            n = len(entry.msgstr_plural)
            if n != expected_plural.num_plurals:
                out.append(f"{where}: {n} plural forms, {language!r} needs {expected_plural.num_plurals}")
            pairs = [(i, entry.msgid_plural if i else entry.msgid, s) for i, s in entry.msgstr_plural.items() if s]
        else:
            pairs = [(None, entry.msgid, entry.msgstr)] if entry.msgstr else []
        msgstr_at = _msgstr_lines(lines, entry)
        python_format = "python-format" in entry.flags
        for form, msgid, msgstr in pairs:
            at = f"{shown}:{msgstr_at.get(form, entry.linenum)}"
            reasons = safety_problems(msgid, msgstr)
            if python_format:
                reasons += format_problems(entry.msgid if form is None else msgid, msgstr)
            out.extend(f"{at}: {reason}" for reason in reasons)
    return out


def msgfmt_check(path: Path, shown: str | None = None) -> list[str]:
    """Run GNU ``msgfmt --check`` on one catalog; its error lines (warnings about optional
    header fields and the summary line left out), the file named as ``shown`` (default:
    relative to the working directory).

    Raises:
        FileNotFoundError: msgfmt is not installed (``apt-get install gettext``).
    """
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        raise FileNotFoundError("msgfmt not found; install GNU gettext (apt-get install gettext)")
    proc = subprocess.run([msgfmt, "--check", "-o", "/dev/null", str(path)], capture_output=True, text=True)
    if proc.returncode == 0:
        return []
    skip = re.compile(r"header field|msgfmt: found \d+ fatal error")  # optional fields; the summary
    return [line.replace(str(path), shown or po.shown(path), 1) for line in proc.stderr.splitlines()
            if line.strip() and not skip.search(line)]


def translation_warnings(project: Project, language: str) -> list[str]:
    """What a build warns about one translation, before rendering any page.

    Every problem :func:`check_catalog` finds in the language's catalogs, then, per
    English page, a missing catalog or the number of its messages that will show in
    English (untranslated, fuzzy, or new since the last ``course update``). Pages are
    rendered regardless; ``mkdocs build --strict`` fails on any of these warnings.

    Args:
        project: the project.
        language: a translation language (not the default one).

    Returns:
        One line per warning, each naming a file (relative to the project root).

    Raises:
        coursekit.catalog.CatalogError: a catalog cannot be read (syntax, encoding); the
            message names file and line.
    """
    out: list[str] = []
    for path in project.catalog_files(language):
        po.load_cached(path)  # unreadable: raise, naming the file and line
        out += check_catalog(project, path)
    for page in project.pages():
        path = project.catalog_path(language, page)
        shown = path.relative_to(project.root)
        catalog = po.load_cached(path)
        if catalog is None:
            out.append(f"{page.as_posix()}: no '{language}' catalog {shown}; the page is shown in English; "
                       f"run: course update --lang {language}")
            continue
        usable = po.translations(catalog)
        msgids = [m.msgid for m in page_messages(project, page)]
        missing = sum(1 for m in msgids if m not in usable)
        if missing:
            out.append(f"{page.as_posix()}: {missing} of {len(msgids)} messages are untranslated or fuzzy in "
                       f"'{language}' and are shown in English; translate them in {shown}")
    return out


def page_warnings(project: Project) -> list[str]:
    """Container syntax on the English pages that the site's engine does not enable (it
    renders as text, and nothing is offered to translators as a title), one
    ``docs/page.md:line: problem; remedy`` line each (:func:`coursekit.segment.syntax_warnings`)."""
    out = []
    for page in project.pages():
        path = project.docs_dir / page
        shown = path.relative_to(project.root).as_posix()
        for line, message in syntax_warnings(path.read_text(encoding="utf-8"), project.engine):
            out.append(f"{shown}:{line}: {message}")
    return out


def check_project(project: Project, languages: tuple[str, ...] | None = None, msgfmt: bool = False) -> list[str]:
    """Problems of every catalog of the given languages (all by default), sorted by file."""
    out: list[str] = []
    for language in languages or project.languages:
        for path in project.catalog_files(language):
            out += check_catalog(project, path)
            try:
                po.load_cached(path)
            except po.CatalogError:
                continue  # already reported, with the right line; msgfmt would only repeat it
            if msgfmt:
                out += msgfmt_check(path, str(path.relative_to(project.root)))
    return out
