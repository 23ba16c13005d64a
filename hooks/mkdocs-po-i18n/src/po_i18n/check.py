"""``po-i18n check``: validate every catalog, one ``file:line: problem`` line per problem.

Checks (gettext manual, "The Format of PO Files" and "Invoking the msgfmt Program"):
syntax and encoding, line ends, the ``Language``/``Plural-Forms``/``Content-Type``
headers, duplicate messages (obsolete ones too, as msgfmt), entries with a ``msgctxt``
(this site writes none, so they are not shown), catalogs whose English page is gone,
msgids that are not in the English source (hand-edited),
plural forms count, ``python-format`` placeholders (as ``msgfmt --check-format`` would,
but for Python's ``%(name)s`` syntax), the safety of every translation
(:mod:`po_i18n.safety`, judged as the block each message is on its English page) and
catalogs missing for an English page. Optionally each file is also given to GNU
``msgfmt --check``.
"""
from __future__ import annotations

import logging
import re
import shutil
import subprocess
from pathlib import Path

import polib
from babel.messages.plurals import get_plural
from mkdocs.exceptions import ConfigurationError, MkDocsException

from . import catalog as po
from . import catalog_file
from .catalog_header import header_problems
from .extract import interface_kinds, interface_messages, page_messages
from .includes import included
from .markdown_engine import engine_for
from .page_guard import refused_together
from .project import Project
from .safety import TranslationCheck, check_for
from .segment import syntax_warnings

__all__ = ["check_catalog", "check_project", "format_problems", "judged", "missing_catalogs", "msgfmt_check", "page_warnings", "project_check",
           "config_problems", "pending_warnings", "refused_messages", "refused_remedy", "site_catalog_warnings",
           "translation_warnings"]


def project_check(project: Project) -> TranslationCheck:
    """The safety check of a project's site outside a build: the Markdown engine its
    mkdocs.yml configures (:func:`po_i18n.markdown_engine.engine_for`).

    Raises:
        mkdocs.exceptions.ConfigurationError: MkDocs refuses mkdocs.yml; the message is
            one line with MkDocs's reasons (which it would otherwise log on their own).
    """
    config_file = project.config_file or project.root / "mkdocs.yml"
    found: list[str] = []
    capture = logging.Handler(logging.WARNING)
    capture.emit = lambda record: found.append(record.getMessage())  # type: ignore[method-assign]
    logger = logging.getLogger("mkdocs.config")
    logger.addHandler(capture)
    try:
        return check_for(engine_for(config_file))
    except MkDocsException as exc:
        reasons = "; ".join(found) or str(exc)
        raise ConfigurationError(f"{config_file}: MkDocs cannot load it ({reasons}); fix it, then run: mkdocs build") from None
    finally:
        logger.removeHandler(capture)


def _language_and_page(project: Project, path: Path) -> tuple[str, Path]:
    """``i18n/<language>/<page>.po`` -> ``(language, page.po)``, nested pages included."""
    language, *page = path.relative_to(project.i18n_dir).parts
    return language, Path(*page)


def _expected_msgids(project: Project, path: Path) -> set[str] | None:
    """The msgids a catalog should hold, or None when its English page is gone (the
    catalog is one of :meth:`po_i18n.project.Project.orphan_catalogs`)."""
    language, rel = _language_and_page(project, path)
    domain = project.domain_of(path)
    if domain is not None:
        return {m.msgid for m in interface_messages(project, domain)}
    page = rel.with_suffix(".md")
    if not (project.docs_dir / page).is_file():
        return None
    return {m.msgid for m in page_messages(project, page)}


# Python's printf-style conversion specifier
# (https://docs.python.org/3/library/stdtypes.html#printf-style-string-formatting):
# "%", an optional "(name)", flags, width, precision, length modifier, conversion type.
_SPEC = re.compile(r"%(?:\((?P<name>[^()]*)\))?[#0 +-]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])")


def _specs(text: str) -> tuple[list[str], list[str]]:
    """``(conversion specs, problems)`` of a format string: every ``%`` but the ``%%`` of a
    literal percent sign, each as written (``%(count)d``), and one phrase per ``%`` that
    starts no complete spec. Nothing is evaluated."""
    specs: list[str] = []
    problems: list[str] = []
    at = 0
    while (at := text.find("%", at)) != -1:
        match = _SPEC.match(text, at)
        if match is None:
            problems.append(f"a % at character {at + 1} starts no placeholder; write a literal % as %%")
            at += 1
            continue
        if match.group() != "%%":
            specs.append(match.group())
        at = match.end()
    return specs, problems


def format_problems(msgid: str, msgstr: str) -> list[str]:
    """Why a ``python-format`` msgstr would not fill as its msgid does.

    Judged by allowlist, without formatting anything: every conversion spec of the msgstr
    must be written exactly as one of the msgid's (``%(count)d``; a width, precision or
    flag the msgid does not have, such as ``%(count)2000d``, is refused: it would pad the
    page), every placeholder of the msgid must be used, and a ``%`` that starts no spec
    must be the ``%%`` of a literal percent sign (Python's printf-style formatting,
    https://docs.python.org/3/library/stdtypes.html#printf-style-string-formatting;
    gettext manual, "python-format" under "Special Comments preceding Keywords").

    Args:
        msgid: the English string (singular or plural).
        msgstr: one translated form.

    Returns:
        One phrase per problem; empty when the msgstr fills correctly.
    """
    wanted, _ = _specs(msgid)
    used, found = _specs(msgstr)
    allowed = ", ".join(dict.fromkeys(wanted)) or "none"
    for spec in dict.fromkeys(used):
        if spec in wanted:
            continue
        if "(" not in spec:
            found.append(f"{_shown_spec(spec)!r} reads as a placeholder the msgid does not have; write a literal % as %%")
        else:
            found.append(f"placeholder {_shown_spec(spec)} is not in the msgid; use one of: {allowed}")
    found += [f"placeholder {spec} of the msgid is missing" for spec in dict.fromkeys(wanted) if spec not in used]
    return found


def _shown_spec(spec: str, limit: int = 24) -> str:
    """A spec as a reason quotes it: at most ``limit`` characters."""
    return spec if len(spec) <= limit else spec[: limit - 1] + "…"


def _english(project: Project, path: Path) -> tuple[str, dict[str, tuple[str, ...]], frozenset[str]]:
    """What a catalog's messages are judged against: the English page's source, the kinds
    each msgid has on it, and the msgids that are ``python-format`` strings (by the
    extractor's flags, not the catalog's, which a translator may edit):
    ``("", kinds of the site strings, their format strings)`` for ``_site.po``;
    ``("", {}, {})`` for a catalog whose page is gone."""
    language, rel = _language_and_page(project, path)
    domain = project.domain_of(path)
    if domain is not None:
        formats = frozenset(m.msgid for m in interface_messages(project, domain) if "python-format" in m.flags)
        return "", {msgid: (kind,) for msgid, kind in interface_kinds(project, domain).items()}, formats
    page = rel.with_suffix(".md")
    if not (project.docs_dir / page).is_file():
        return "", {}, frozenset()
    kinds: dict[str, tuple[str, ...]] = {}
    for message in page_messages(project, page):
        kinds[message.msgid] = tuple(dict.fromkeys((*kinds.get(message.msgid, ()), message.comment)))
    return (project.docs_dir / page).read_text(encoding="utf-8"), kinds, frozenset()


def judged(project: Project, path: Path, catalog, checker: TranslationCheck) -> list[tuple]:
    """:func:`_judged`, remembered while the catalog (the object :func:`po_i18n.catalog.load_cached`
    keeps while the file is unchanged), its English page and what the page includes stand:
    a build asks for every catalog in its warnings, its status pages and its interface
    strings, and a preview rebuild asks again for every catalog after one was edited."""
    english = _english(project, path)
    return per_catalog(_judged_memo, (path, checker), catalog, (english, included(checker.engine, english[0])),
                       lambda: list(_judged(project, path, catalog, checker, english)))


_judged_memo: dict = {}


def per_catalog(memo: dict, key, catalog, depends: tuple, compute):
    """``compute()``, remembered in ``memo[key]`` while ``catalog`` is the same object
    (:func:`po_i18n.catalog.load_cached` keeps one while the file is unchanged) and
    ``depends`` (the English page, what it includes) compares equal."""
    hit = memo.get(key)
    if hit is not None and hit[0] is catalog and hit[1] == depends:
        return hit[2]
    value = compute()
    memo[key] = (catalog, depends, value)
    return value


def _judged(project: Project, path: Path, catalog, checker: TranslationCheck, english: tuple):
    """``(entry, plural form or None, English, msgstr, reasons)`` for every used translation
    (not fuzzy, not obsolete, not empty) of a catalog whose msgid is on its page (or, for
    ``_site.po``, is a site string); ``reasons`` is what the safety check refuses
    (:mod:`po_i18n.safety`, then :func:`po_i18n.page_guard.refused_together`) and, for
    a ``python-format`` string, :func:`format_problems`; empty when accepted.

    An entry whose msgid is on no page can never be shown; it is not rendered (so no
    hand-added entry, however long, costs the check anything but reading it):
    :func:`check_catalog` reports it. ``english`` is :func:`_english` of the catalog."""
    source, kinds, formats = english
    page = checker.page(source)
    rows = []
    for entry in catalog:
        if entry.obsolete or entry.fuzzy or not entry.msgid or entry.msgctxt is not None or entry.msgid not in kinds:
            continue
        if entry.msgid_plural:
            pairs = [(i, entry.msgid_plural if i else entry.msgid, s) for i, s in sorted(entry.msgstr_plural.items()) if s]
        else:
            pairs = [(None, entry.msgid, entry.msgstr)] if entry.msgstr else []
        for form, english, msgstr in pairs:
            # a format string is judged as a format first: nothing of it is rendered or filled before
            reasons = format_problems(english, msgstr) if entry.msgid in formats or "python-format" in entry.flags else []
            rows.append((entry, form, english, msgstr, reasons or page.problems(english, msgstr, kinds[entry.msgid])))
    together = {}
    if source:  # a page: what each message passed alone must also keep the page together
        accepted = {entry.msgid: msgstr for entry, form, _, msgstr, reasons in rows if form is None and not reasons}
        together = refused_together(checker.engine, source, accepted, project.default_language)
    for entry, form, english, msgstr, reasons in rows:
        yield entry, form, english, msgstr, reasons or ([together[entry.msgid]] if entry.msgid in together and form is None else [])


def refused_messages(project: Project, path: Path, checker: TranslationCheck | None = None) -> dict[str, str]:
    """The msgids of one catalog whose translation (any plural form) the safety check
    refuses, with the reasons joined by ``"; "``; they show in English.

    Args:
        project: the project.
        path: ``i18n/<lang>/<page>.po`` or ``_site.po``; a missing file has none.
        checker: the site's check (default: :func:`project_check`).

    Raises:
        po_i18n.catalog.CatalogError: the catalog cannot be read.
    """
    catalog = po.load_cached(path)
    if catalog is None:
        return {}
    out: dict[str, str] = {}
    for entry, _, _, _, reasons in judged(project, path, catalog, checker or project_check(project)):
        if reasons:
            out[entry.msgid] = "; ".join(filter(None, (out.get(entry.msgid), *reasons)))
    return out


def missing_catalogs(project: Project, language: str) -> list[str]:
    """One line per catalog a language lacks: ``i18n/<lang>/<page>.po: no catalog; …``,
    for every English page and for the site-wide strings (``_site.po``)."""
    wanted = [(path, "the site-wide strings (mkdocs.yml values, notices) are" if domain == "site"
               else f"the interface strings of '{domain}' are") for path, domain in project.interface_catalogs(language).items()]
    wanted += [(project.catalog_path(language, page), f"{(project.docs_dir / page).relative_to(project.root).as_posix()} is")
               for page in project.pages()]
    return [f"{path.relative_to(project.root).as_posix()}: no catalog, so {what} shown in English in '{language}'; "
            f"create it with: po-i18n update --lang {language}" for path, what in wanted if not catalog_file.exists(path)]


REFUSED_REMEDY = "the English is shown instead: keep the msgid's code, links, markup and placeholders as they are and add none"


def refused_remedy(project: Project) -> str:
    """:data:`REFUSED_REMEDY`, pointing at the site's translator guide when the plugin's
    ``translator_guide`` option names one (the course: ``i18n/README.md``)."""
    guide = project.options.get("translator_guide")
    return f"{REFUSED_REMEDY} (see {guide})" if guide else REFUSED_REMEDY


def _changed_in_english(project: Project, path: Path, msgid: str) -> bool:
    """Whether a catalog's msgid that is no longer in the English source was English once
    (the English changed since ``po-i18n update`` wrote it), rather than edited by hand.

    The records of what the English was: another language's catalog of the same page
    holds the msgid (as its msgid, or as the ``#| msgid`` of a fuzzy entry), since
    ``po-i18n update`` writes every language from one extraction; or the English source
    (the page, or mkdocs.yml for ``_site.po``) was saved after the catalog (file
    modification times). Neither: the catalog was edited after the English, by hand."""
    language, rel = _language_and_page(project, path)
    for other in project.languages:
        if other == language:
            continue
        sibling = project.i18n_dir / other / rel
        try:
            catalog = po.load_cached(sibling)
        except po.CatalogError:
            continue
        if catalog is not None and any(msgid in (e.msgid, e.previous_msgid) for e in catalog):
            return True
    source = project.config_file or project.root / "mkdocs.yml" if project.domain_of(path) is not None \
        else project.docs_dir / rel.with_suffix(".md")
    try:
        return source.stat().st_mtime_ns > path.stat().st_mtime_ns
    except OSError:
        return False


def _lines_after_update(project: Project, path: Path) -> dict[str, int]:
    """For each msgid of a catalog that ``po-i18n update`` would turn into the fuzzy
    suggestion of a new English message (``#| msgid``: :func:`po_i18n.catalog.merge`),
    the line where that entry starts in the catalog ``po-i18n update`` would write (the
    line the build names for it afterwards);
    computed in memory, nothing is written."""
    language, rel = _language_and_page(project, path)
    domain = project.domain_of(path)
    if domain is not None:
        messages = interface_messages(project, domain)
    else:
        messages = page_messages(project, rel.with_suffix(".md"))
    try:
        merged = po.merge(po.load_for_update(path), messages, language, str(project.config.get("site_name", "")))
    except (po.CatalogError, ValueError):  # duplicates: po-i18n update refuses them too (reported apart)
        return {}
    written = polib.pofile(po.saved_text(merged), encoding="utf-8")
    return {e.previous_msgid: e.linenum for e in written if e.fuzzy and e.previous_msgid and not e.obsolete}


def check_catalog(project: Project, path: Path, checker: TranslationCheck | None = None) -> list[str]:
    """Problems of one catalog, each ``path:line: message; remedy``.

    A translation the safety check refuses gives one line at its msgstr, its reasons
    joined by ``"; "`` and followed by :func:`refused_remedy`, which is also the warning
    the build prints when it shows the message in English. A duplicate message names
    both lines (:func:`po_i18n.catalog.duplicate_reason`); an entry with a context,
    its ``msgctxt`` line; a catalog that belongs to no page
    (:meth:`po_i18n.project.Project.orphan_catalogs`) gets one line without a line
    number, and its messages, shown on no page, are not judged.

    Args:
        project: the project (for the English source and the expected language).
        path: ``i18n/<lang>/<page>.po``.
        checker: the site's safety check (default: :func:`project_check`).

    Returns:
        The problem lines; empty when the catalog is fine.
    """
    shown = catalog_file.printable(str(path.relative_to(project.root) if path.is_relative_to(project.root) else path))
    try:  # a link, a directory, an unreadable file: one line, and nothing of what is there
        raw = catalog_file.read(path)
    except po.CatalogError as exc:
        return [exc.at(shown)]
    out: list[str] = []
    if b"\r\n" in raw:
        line = raw[: raw.index(b"\r\n")].count(b"\n") + 1
        out.append(f"{shown}:{line}: CRLF line ends; save the catalog with LF (Unix) line ends")
    try:
        catalog = po.load_cached(path)
    except po.CatalogError as exc:
        return out + [exc.at(shown)]
    language = _language_and_page(project, path)[0]
    text = raw.decode("utf-8")
    out += [f"{shown}:{line}: {reason}" for line, reason in header_problems(catalog, language, text)]
    if not catalog.metadata:
        return out
    expected_plural = get_plural(language)
    live = [e for e in catalog if not e.obsolete]
    lines = text.splitlines()
    for first, repeated in po.duplicates(catalog):
        out.append(f"{shown}:{po.message_line(lines, repeated)}: {po.duplicate_reason(lines, first, repeated)}")
    expected = _expected_msgids(project, path)
    if expected is None:  # its page is gone (Project.orphan_catalogs): shown on no page, nothing more to judge
        page = (project.docs_dir / _language_and_page(project, path)[1].with_suffix(".md")).relative_to(project.root)
        return out + [f"{shown}: no English page {page.as_posix()}; if the page was renamed, run po-i18n update, "
                      "which offers its translations to the new page; then delete this file"]
    after_update: dict[str, int] | None = None  # computed for the first msgid the English changed
    for entry in live:
        where = f"{shown}:{entry.linenum}"
        if entry.msgctxt is not None:
            out.append(f"{shown}:{po.message_line(lines, entry)}: context {entry.msgctxt[:40]!r} is not used by this "
                       "site, so this translation is not shown; run po-i18n update, which offers it (as fuzzy) to the entry "
                       "without a context, then delete this entry")
            continue
        if entry.msgid and entry.msgid not in expected:  # "": a second header
            if not _changed_in_english(project, path, entry.msgid):
                out.append(f"{where}: msgid {entry.msgid[:40]!r} is not in the English source (was it edited by hand?); "
                           "restore it, and run: po-i18n update")
            elif entry.translated() or entry.fuzzy:
                after = after_update if after_update is not None else (after_update := _lines_after_update(project, path))
                line = after.get(entry.msgid)
                out.append(f"{where}: msgid {entry.msgid[:40]!r} changed in English: run `po-i18n update`, then " + (
                    f"update the fuzzy translation at {shown}:{line}" if line else
                    f"translate the new English in {shown} (the old translation is kept, as obsolete, at its end)"))
            else:
                out.append(f"{where}: msgid {entry.msgid[:40]!r} changed in English: run `po-i18n update`, "
                           f"then translate the new English in {shown}")
        if entry.msgid_plural and not entry.fuzzy:
            n = len(entry.msgstr_plural)
            if n != expected_plural.num_plurals:
                out.append(f"{where}: {n} plural forms, {language!r} needs {expected_plural.num_plurals}")
            elif sorted(entry.msgstr_plural) != list(range(n)):
                out.append(f"{where}: plural forms numbered other than msgstr[0] to msgstr[{n - 1}], "
                           f"the forms of {language!r}; number them 0 to {n - 1}")
    for entry, form, english, msgstr, reasons in judged(project, path, catalog, checker or project_check(project)):
        at = f"{shown}:{po.msgstr_lines(lines, entry).get(form, entry.linenum)}"
        if reasons:
            out.append(f"{at}: {'; '.join(reasons)}; {refused_remedy(project)}")
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


def site_catalog_warnings(project: Project, language: str) -> list[str]:
    """The interface strings (``_site.po``: mkdocs.yml values and the engine's texts, and
    each catalog the plugin's ``interface_strings`` adds) that show in English in a
    language because they are untranslated, fuzzy or not in the catalog yet: one line per
    catalog, ``i18n/<lang>/_site.po:LINE: N of M site-wide messages …; remedy``, at the
    msgstr of the first of them (none without a catalog: :func:`missing_catalogs` says
    that). A build treats it as it treats a page's (the ``untranslated`` option).

    Raises:
        po_i18n.catalog.CatalogError: a catalog cannot be read.
    """
    out = []
    for path, domain in project.interface_catalogs(language).items():
        catalog = po.load_cached(path)
        if catalog is None:
            continue
        shown = path.relative_to(project.root).as_posix()
        held = {e.msgid: e for e in catalog if not e.obsolete and e.msgctxt is None}
        msgids = list(dict.fromkeys(m.msgid for m in interface_messages(project, domain)))
        missing = [m for m in msgids if m not in held or not held[m].translated()]
        if not missing:
            continue
        what = (f"{len(missing)} of {len(msgids)} site-wide messages are untranslated or fuzzy in '{language}' and are "
                "shown in English")
        if all(m in held for m in missing):
            first = min((held[m] for m in missing), key=lambda e: e.linenum)
            line = po.msgstr_lines(catalog_file.read(path).decode("utf-8").splitlines(), first).get(None, first.linenum)
            fuzzy = "; a fuzzy one is used once you have checked its msgstr and deleted its '#, fuzzy' line" \
                if any(held[m].fuzzy for m in missing) else ""
            out.append(f"{shown}:{line}: {what}; translate them in {shown}, the first at line {line}{fuzzy}")
        else:
            out.append(f"{shown}: {what}; add the new ones with: po-i18n update --lang {language}, then translate "
                       f"them in {shown}")
    return out


def translation_warnings(project: Project, language: str, checker: TranslationCheck | None = None,
                         pending: bool = True) -> list[str]:
    """What a build warns about one translation, before rendering any page.

    Every problem :func:`check_catalog` finds in the language's catalogs, every missing
    catalog (:func:`missing_catalogs`), then, for the site-wide strings
    (:func:`site_catalog_warnings`) and per English page, the number of its
    messages that will show in English (untranslated, fuzzy, or new since the last
    ``po-i18n update``), with the catalog line of the first of them, or, when some are not
    in the catalog yet, the ``po-i18n update`` that adds them (:func:`pending_warnings`).
    Pages are rendered regardless; ``mkdocs build --strict`` fails on any of these warnings.

    Args:
        project: the project.
        language: a translation language (not the default one).
        checker: the safety check the build renders with (``build_context.check_of``;
            default: :func:`project_check`, the same check outside a build).
        pending: include :func:`pending_warnings` (messages shown in English).

    Returns:
        One line per warning, each naming a file (relative to the project root).

    Raises:
        po_i18n.catalog.CatalogError: a catalog cannot be read (syntax, encoding); the
            message names file and line.
    """
    out: list[str] = []
    for path in project.catalog_files(language):
        po.load_cached(path)  # unreadable: raise, naming the file and line
        out += check_catalog(project, path, checker)
    out += missing_catalogs(project, language)
    return out + (pending_warnings(project, language) if pending else [])


def pending_warnings(project: Project, language: str) -> list[str]:
    """The messages that show in English because they are untranslated, fuzzy, or new since
    the last ``po-i18n update``: for each interface catalog (:func:`site_catalog_warnings`)
    and, per English page, one line with the number of them and the catalog line of the
    first, or the ``po-i18n update`` that adds them (the part of
    :func:`translation_warnings` the plugin's ``untranslated`` option makes a warning or
    only a note). A page without a catalog is left to :func:`missing_catalogs`.

    Raises:
        po_i18n.catalog.CatalogError: a catalog cannot be read.
    """
    out = site_catalog_warnings(project, language)
    for page in project.pages():
        path = project.catalog_path(language, page)
        shown = path.relative_to(project.root)
        catalog = po.load_cached(path)
        if catalog is None:
            continue  # reported above
        usable = po.translations(catalog)
        # each message once, as the catalog holds it (and ``po-i18n stats`` counts it),
        # although a page may say the same sentence twice
        msgids = list(dict.fromkeys(m.msgid for m in page_messages(project, page)))
        missing = [m for m in msgids if m not in usable]
        if missing:
            wanted = set(missing)
            held = {e.msgid: e for e in catalog if not e.obsolete and e.msgctxt is None and e.msgid in wanted}
            if len(held) == len(missing):
                first = min(held.values(), key=lambda e: e.linenum)
                lines = catalog_file.read(path).decode("utf-8").splitlines()
                where = f"translate them in {shown}, the first at line {po.msgstr_lines(lines, first).get(None, first.linenum)}"
            else:
                where = f"add the new ones with: po-i18n update --lang {language}, then translate them in {shown}"
            if any(e.fuzzy for e in held.values()):  # a fuzzy entry stays English until its flag goes
                where += "; a fuzzy one is used once you have checked its msgstr and deleted its '#, fuzzy' line"
            out.append(f"{page.as_posix()}: {len(missing)} of {len(msgids)} messages are untranslated or fuzzy in "
                       f"'{language}' and are shown in English; {where}")
    return out


def config_problems(project: Project, extensions: list[str] | None = None) -> list[str]:
    """What in mkdocs.yml stops the engine from working, one line each, with the remedy:
    translated headings keep their English anchors as ``{ #id }`` attribute lists
    (:mod:`po_i18n.anchors`), which Python-Markdown reads only with ``attr_list``.

    Args:
        project: the project.
        extensions: the names of the enabled Markdown extensions (MkDocs's
            ``config.markdown_extensions`` in a build); default: read from mkdocs.yml.
    """
    if extensions is None:
        extensions = [e if isinstance(e, str) else next(iter(e)) for e in project.config.get("markdown_extensions") or []]
    if "attr_list" in extensions or "markdown.extensions.attr_list" in extensions:
        return []
    name = project.config_file.name if project.config_file else "mkdocs.yml"
    return [f"po-i18n: translated headings keep their English anchors as '{{ #id }}' attribute lists, which need the "
            f"attr_list extension: add '- attr_list' under markdown_extensions in {name}"]


def page_warnings(project: Project) -> list[str]:
    """Container syntax on the English pages that the site's engine does not enable (it
    renders as text, and nothing is offered to translators as a title), one
    ``docs/page.md:line: problem; remedy`` line each (:func:`po_i18n.segment.syntax_warnings`)."""
    out = []
    for page in project.pages():
        path = project.docs_dir / page
        shown = path.relative_to(project.root).as_posix()
        for line, message in syntax_warnings(path.read_text(encoding="utf-8"), project.engine):
            out.append(f"{shown}:{line}: {message}")
    return out


def check_project(project: Project, languages: tuple[str, ...] | None = None, msgfmt: bool = False,
                  checker: TranslationCheck | None = None) -> list[str]:
    """Problems of every catalog of the given languages (all by default), by file, then
    the catalogs each language lacks (:func:`missing_catalogs`)."""
    out: list[str] = []
    checker = checker or project_check(project)
    for language in languages or project.languages:
        out += missing_catalogs(project, language)
        for path in project.catalog_files(language):
            out += check_catalog(project, path, checker)
            try:
                po.load_cached(path)
            except po.CatalogError:
                continue  # already reported, with the right line; msgfmt would only repeat it
            if msgfmt:
                out += msgfmt_check(path, str(path.relative_to(project.root)))
    return out
