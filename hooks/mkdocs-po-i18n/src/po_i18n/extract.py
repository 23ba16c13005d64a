"""Extract the messages of the English pages and site-wide strings, and update catalogs."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polib

from . import catalog as po
from . import catalog_file
from .keep import Change, keep_translations
from .project import SITE_DOMAIN, Project
from .segment import segment

__all__ = ["interface_kinds", "interface_messages", "page_messages", "site_messages", "nav_titles", "update", "UpdateReport", "SITE_CONFIG_KEYS"]

# mkdocs.yml values shown on every page, translated through i18n/<lang>/_site.po.
SITE_CONFIG_KEYS = {
    "site_name": "site name (header, window title)",
    "site_description": "site description (search engines, link previews)",
}

NAV_COMMENT = "navigation title (mkdocs.yml nav)"


def nav_titles(nav) -> list[str]:
    """The titles mkdocs.yml's ``nav`` gives in words (``- Home: index.md``, a section
    ``- Guide: [...]``), in order, each once; entries without a title (``- index.md``)
    take the page's first heading, which the page's catalog translates.

    Args:
        nav: the ``nav`` value of mkdocs.yml (a list of strings and one-key mappings), or None.
    """
    found: list[str] = []

    def walk(items) -> None:
        for item in items or []:
            if isinstance(item, dict):
                for title, value in item.items():
                    if isinstance(title, str) and title not in found:
                        found.append(title)
                    if isinstance(value, list):
                        walk(value)

    walk(nav if isinstance(nav, list) else [])
    return found


def page_messages(project: Project, page: Path) -> list[po.Message]:
    """The messages of one English page, in page order.

    Args:
        project: the project.
        page: the page path relative to ``docs_dir`` (``Path("ddp-basics.md")``).

    Returns:
        One :class:`po_i18n.catalog.Message` per translatable block; the reference is
        the page path relative to the project root, without a line number.
    """
    source = (project.docs_dir / page).read_text(encoding="utf-8")
    reference = (project.docs_dir / page).relative_to(project.root).as_posix()
    return [po.Message(s.msgid, s.kind, reference) for s in segment(source, project.engine)]


def interface_messages(project: Project, domain: str = SITE_DOMAIN) -> list[po.Message]:
    """The strings of one interface catalog: for ``site`` (``_site.po``), the mkdocs.yml
    values and the engine's own strings; for another domain, the strings mkdocs.yml names
    under the plugin's ``interface_strings`` (:attr:`po_i18n.project.Project.interface_strings`).

    Raises:
        po_i18n.project.ProjectError: a domain's strings cannot be imported.
    """
    messages = [
        po.Message(str(project.config[key]), comment, "mkdocs.yml")
        for key, comment in SITE_CONFIG_KEYS.items()
        if project.config.get(key)
    ] + [po.Message(title, NAV_COMMENT, "mkdocs.yml") for title in nav_titles(project.config.get("nav"))] \
        if domain == SITE_DOMAIN else []
    reference = "po-i18n" if domain == SITE_DOMAIN else str(project.options["interface_strings"][domain]).partition(":")[0]
    messages += [po.Message(s.msgid, s.comment, reference, s.plural, s.flags) for s in project.interface_strings[domain]]
    return messages


def site_messages(project: Project) -> list[po.Message]:
    """The strings of ``_site.po`` (:func:`interface_messages` of ``site``)."""
    return interface_messages(project, SITE_DOMAIN)


def interface_kinds(project: Project, domain: str = SITE_DOMAIN) -> dict[str, str]:
    """Where each string of an interface catalog goes, for the safety check
    (:mod:`po_i18n.safety`): mkdocs.yml values are written into HTML templates as they
    are (``"plain text"``), each interface string has its own kind; the plural form of a
    plural string is keyed too."""
    kinds = {str(project.config[key]): "plain text" for key in SITE_CONFIG_KEYS if project.config.get(key)} \
        if domain == SITE_DOMAIN else {}
    if domain == SITE_DOMAIN:  # written into the navigation and window title as they are
        kinds.update((title, "plain text") for title in nav_titles(project.config.get("nav")))
    for s in project.interface_strings[domain]:
        kinds.setdefault(s.msgid, s.kind)
        if s.plural:
            kinds.setdefault(s.plural, s.kind)
    return kinds


@dataclass
class UpdateReport:
    """Which catalogs :func:`update` wrote (``written``; with ``write=False``, would
    write) and left as they were (``unchanged``), the catalogs that belong to no page
    (``orphans``), whose translations were offered to the other catalogs of their
    language, and with ``keep_translations``, each message whose English changed:
    ``(catalog, line of its msgid in the catalog as written, the change)``."""

    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    orphans: list[Path] = field(default_factory=list)
    changes: list[tuple[Path, int, Change]] = field(default_factory=list)


def _read(path: Path):
    """A catalog for merging (``None`` if missing), refused when it holds duplicates."""
    if not catalog_file.exists(path):  # a link or a directory exists: load refuses it
        return None
    catalog = po.load_for_update(path)
    found = po.duplicates(catalog)
    if found:
        lines = catalog_file.read(path).decode("utf-8").splitlines()
        first, repeated = found[0]
        raise po.CatalogError(path, po.message_line(lines, repeated),
                              f"{po.duplicate_reason(lines, first, repeated)}, then run po-i18n update again "
                              "(no catalog was changed)")
    return catalog


def update(project: Project, languages: tuple[str, ...] | None = None, *, keep_typo_fixes: bool = False,
           write: bool = True) -> UpdateReport:
    """Re-extract every page and merge the messages into each language's catalogs
    (:func:`po_i18n.catalog.merge`), offering the translations of a language's orphaned
    catalogs (:meth:`po_i18n.project.Project.orphan_catalogs`: a renamed or deleted
    page's) to its other catalogs, as ``msgmerge --compendium`` does. Orphans are read,
    never written or deleted.

    Args:
        project: the project.
        languages: the locales to update; all translation languages when ``None``.
        keep_typo_fixes: keep current the translations of messages whose English changed
            only by a typo fix (:func:`po_i18n.keep.keep_translations`) instead of
            fuzzy; the writer asks for it (``po-i18n update --keep-translations``).
        write: ``False`` writes nothing and reports what would be written
            (``--dry-run``).

    Returns:
        An :class:`UpdateReport`. A catalog is only rewritten when its text changes.

    Raises:
        po_i18n.catalog.CatalogError: a catalog (orphans included) cannot be read, holds
            two entries for one message (``msgmerge`` refuses those too), or its place is a
            link or reached through one; every catalog is read before any is written, so
            then nothing is written at all (and nothing outside ``i18n/`` ever is).
    """
    report = UpdateReport()
    name = str(project.config.get("site_name", project.root.name))
    domains = list(project.interface_strings)
    sources: list[tuple[str | Path, list[po.Message]]] = [(domain, interface_messages(project, domain)) for domain in domains]
    sources += [(page, page_messages(project, page)) for page in project.pages()]
    work = []
    for language in languages or project.languages:
        orphans = project.orphan_catalogs(language)
        compendium = [_read(path) for path in orphans]
        report.orphans += orphans
        for page, messages in sources:
            path = project.interface_catalog_path(language, page) if isinstance(page, str) else project.catalog_path(language, page)
            work.append((path, _read(path), messages, language, compendium, page))
    judges = _judges(project, sources) if keep_typo_fixes else {}
    for path, old, messages, language, compendium, source in work:
        merged = po.merge(old, messages, language, name, compendium, project.options.get("translator_guide"))
        if keep_typo_fixes:
            changes = keep_translations(old, merged, *judges[source])
            report.changes += _placed(path, merged, changes)
        saved = po.save(merged, path) if write else po.differs(merged, path)
        (report.written if saved else report.unchanged).append(path)
    return report


def _judges(project: Project, sources: list[tuple[str | Path, list[po.Message]]]) -> dict:
    """``{source: (safety check of its page, kinds of its msgids)}`` for every page and
    interface domain: what :func:`po_i18n.keep.keep_translations` judges a change with."""
    from .check import project_check  # the site's Markdown engine, loaded only when asked for (check imports this module)

    checker = project_check(project)
    judges = {}
    for source, messages in sources:
        if isinstance(source, str):
            judges[source] = (checker.page(""), {m: (k,) for m, k in interface_kinds(project, source).items()})
            continue
        kinds: dict[str, tuple[str, ...]] = {}
        for message in messages:
            kinds[message.msgid] = tuple(dict.fromkeys((*kinds.get(message.msgid, ()), message.comment)))
        judges[source] = (checker.page((project.docs_dir / source).read_text(encoding="utf-8")), kinds)
    return judges


def _placed(path: Path, merged, changes: list[Change]) -> list[tuple[Path, int, Change]]:
    """``(path, line, change)``: each change with the line of its msgid in the catalog's
    text as :func:`po_i18n.catalog.save` writes it."""
    if not changes:
        return []
    text = po.saved_text(merged)
    lines = text.splitlines()
    written = {e.msgid: e for e in polib.pofile(text, wrapwidth=po.WRAP_WIDTH) if not e.obsolete and e.msgctxt is None}
    return [(path, po.message_line(lines, written[change.new]), change) for change in changes]
