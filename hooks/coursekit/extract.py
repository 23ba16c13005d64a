"""Extract the messages of the English pages and site-wide strings, and update catalogs."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import catalog as po
from . import catalog_file
from .interface import STRINGS
from .project import Project
from .segment import segment

__all__ = ["page_messages", "site_kinds", "site_messages", "update", "UpdateReport", "SITE_CONFIG_KEYS"]

# mkdocs.yml values shown on every page, translated through i18n/<lang>/_site.po.
SITE_CONFIG_KEYS = {
    "site_name": "site name (header, window title)",
    "site_description": "site description (search engines, link previews)",
}



def page_messages(project: Project, page: Path) -> list[po.Message]:
    """The messages of one English page, in page order.

    Args:
        project: the project.
        page: the page path relative to ``docs_dir`` (``Path("ddp-basics.md")``).

    Returns:
        One :class:`coursekit.catalog.Message` per translatable block; the reference is
        the page path relative to the project root, without a line number.
    """
    source = (project.docs_dir / page).read_text(encoding="utf-8")
    reference = (project.docs_dir / page).relative_to(project.root).as_posix()
    return [po.Message(s.msgid, s.kind, reference) for s in segment(source, project.engine)]


def site_messages(project: Project) -> list[po.Message]:
    """The site-wide strings: mkdocs.yml values and the hooks' interface strings."""
    messages = [
        po.Message(str(project.config[key]), comment, "mkdocs.yml")
        for key, comment in SITE_CONFIG_KEYS.items()
        if project.config.get(key)
    ]
    messages += [po.Message(s.msgid, s.comment, "hooks", s.plural, s.flags) for s in STRINGS]
    return messages


def site_kinds(project: Project) -> dict[str, str]:
    """Where each site-wide string goes, for the safety check (:mod:`coursekit.safety`):
    mkdocs.yml values are written into HTML templates as they are (``"plain text"``),
    interface strings say their own :attr:`coursekit.interface.UIString.kind`; the
    plural English of a plural string is keyed too."""
    kinds = {str(project.config[key]): "plain text" for key in SITE_CONFIG_KEYS if project.config.get(key)}
    for s in STRINGS:
        kinds.setdefault(s.msgid, s.kind)
        if s.plural:
            kinds.setdefault(s.plural, s.kind)
    return kinds


@dataclass
class UpdateReport:
    """Which catalogs :func:`update` wrote (``written``) and left as they were
    (``unchanged``), and the catalogs that belong to no page (``orphans``), whose
    translations were offered to the other catalogs of their language."""

    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    orphans: list[Path] = field(default_factory=list)


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
                              f"{po.duplicate_reason(lines, first, repeated)}, then run course update again "
                              "(no catalog was changed)")
    return catalog


def update(project: Project, languages: tuple[str, ...] | None = None) -> UpdateReport:
    """Re-extract every page and merge the messages into each language's catalogs
    (:func:`coursekit.catalog.merge`), offering the translations of a language's orphaned
    catalogs (:meth:`coursekit.project.Project.orphan_catalogs`: a renamed or deleted
    page's) to its other catalogs, as ``msgmerge --compendium`` does. Orphans are read,
    never written or deleted.

    Args:
        project: the project.
        languages: the locales to update; all translation languages when ``None``.

    Returns:
        An :class:`UpdateReport`. A catalog is only rewritten when its text changes.

    Raises:
        coursekit.catalog.CatalogError: a catalog (orphans included) cannot be read, holds
            two entries for one message (``msgmerge`` refuses those too), or its place is a
            link or reached through one; every catalog is read before any is written, so
            then nothing is written at all (and nothing outside ``i18n/`` ever is).
    """
    report = UpdateReport()
    name = str(project.config.get("site_name", project.root.name))
    sources: list[tuple[Path | None, list[po.Message]]] = [(None, site_messages(project))]
    sources += [(page, page_messages(project, page)) for page in project.pages()]
    work = []
    for language in languages or project.languages:
        orphans = project.orphan_catalogs(language)
        compendium = [_read(path) for path in orphans]
        report.orphans += orphans
        for page, messages in sources:
            path = project.site_catalog_path(language) if page is None else project.catalog_path(language, page)
            work.append((path, _read(path), messages, language, compendium))
    for path, old, messages, language, compendium in work:
        merged = po.merge(old, messages, language, name, compendium)
        (report.written if po.save(merged, path) else report.unchanged).append(path)
    return report
