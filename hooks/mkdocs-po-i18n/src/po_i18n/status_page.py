"""The generated translation status page: per language, how much of each page is translated."""
from __future__ import annotations

import html
import posixpath
from pathlib import Path

from . import catalog as po
from .check import per_catalog, project_check, refused_messages
from .interface import (PERCENT, STATUS_FUZZY, STATUS_INTRO, STATUS_LANGUAGE, STATUS_NO_CATALOG, STATUS_PAGE, STATUS_TITLE,
                        STATUS_TRANSLATED, STATUS_UNTRANSLATED, Interface)
from .project import Project
from .render import render
from .includes import included
from .safety import TranslationCheck
from .segment import segment
from .stats import catalog_stats

__all__ = ["STATUS_PAGE_URI", "status_markdown"]

STATUS_PAGE_URI = "translation-status.md"


def _title(project: Project, page: Path, language: str, catalog) -> str:
    """The page's title in a language: its first heading, translated when possible."""
    english = next((e.msgid for e in catalog or () if e.comment.startswith("heading")), None)
    if english is None:
        segments = segment((project.docs_dir / page).read_text(encoding="utf-8"), project.engine)
        english = next((s.msgid for s in segments if s.kind == "heading"), page.stem)
    if language == project.default_language:
        return english
    return po.translations(catalog).get(english, english)


def _rows(project: Project, language: str, ui: Interface, checker: TranslationCheck) -> list[tuple[Path, str, str, str, str]]:
    """``(page, title, translated %, fuzzy, untranslated)`` per page, as table cell texts."""
    rows = []
    for page in project.pages():
        path = project.catalog_path(language, page)
        catalog = po.load_cached(path)
        title = _title(project, page, language, catalog)
        if catalog is not None:
            shown, fuzzy, untranslated = _figures(project, page, path, catalog, checker)
            rows.append((page, title, ui.text(PERCENT, percent=int(shown)), str(fuzzy), str(untranslated)))
        else:  # the whole page is shown in English; say why rather than "0 untranslated"
            rows.append((page, title, ui.text(PERCENT, percent=0), "—", _cell(ui.text(STATUS_NO_CATALOG))))
    return rows


def _figures(project: Project, page: Path, path: Path, catalog, checker: TranslationCheck) -> tuple[float, int, int]:
    """(translated % as the page's notice computes it, fuzzy, untranslated) of one catalog,
    remembered while the catalog object, the page and what it includes stand (every status
    page of a build, and every preview rebuild, asks for every catalog)."""
    source = (project.docs_dir / page).read_text(encoding="utf-8")

    def compute() -> tuple[float, int, int]:
        st = catalog_stats(catalog, refused_messages(project, path, checker))
        shown = render(source, po.translations(catalog), accept=checker.page(source).accept, engine=project.engine).percent
        return shown, st.fuzzy, st.untranslated

    return per_catalog(_memo, (path, checker), catalog, (source, included(project.engine, source)), compute)


_memo: dict = {}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def status_markdown(project: Project, language: str, ui: Interface, checker: TranslationCheck | None = None,
                    uri: str = STATUS_PAGE_URI) -> str:
    """The status page's Markdown for one language (a default-language page lists the
    translations; titles come from each catalog's first heading message).

    On a translation's site it lists that language's pages; on the default language's
    site it lists every translation language, each row linking to the translated page.
    A page without a catalog says so ("no catalog") in the untranslated column.

    Args:
        project: the project.
        language: the language being built.
        ui: the interface strings of that language.
        checker: the safety check the build renders with (default:
            :func:`po_i18n.check.project_check`); refused translations count as
            untranslated.
        uri: where the status page is, relative to ``docs_dir`` (the plugin's
            ``status_page`` option); links to the pages are relative to it.
    """
    checker = checker or project_check(project)
    here = posixpath.dirname(uri)
    up = "../" * (uri.count("/") + 1)  # from the status page's folder (directory URLs) to the site root
    head = [f"# {ui.text(STATUS_TITLE)} {{ #translation-status }}", "", ui.text(STATUS_INTRO), ""]
    cols = [_cell(ui.text(s)) for s in (STATUS_PAGE, STATUS_TRANSLATED, STATUS_FUZZY, STATUS_UNTRANSLATED)]
    if language != project.default_language:
        lines = ["| " + " | ".join(cols) + " |", "| --- | ---: | ---: | ---: |"]
        for page, title, pct, fuzzy, untranslated in _rows(project, language, ui, checker):
            lines.append(f"| [{_cell(title)}]({posixpath.relpath(page.as_posix(), here or '.')}) | {pct} | {fuzzy} | {untranslated} |")
        return "\n".join(head + lines) + "\n"
    lines = ["| " + " | ".join([_cell(ui.text(STATUS_LANGUAGE)), *cols]) + " |", "| --- | --- | ---: | ---: | ---: |"]
    for lang in project.languages:
        for page, title, pct, fuzzy, untranslated in _rows(project, lang, ui, checker):
            stem = page.with_suffix("").as_posix()
            url = f"{up}{lang}/" if stem == "index" else f"{up}{lang}/{stem}/"
            # raw HTML: MkDocs only resolves links between pages of the language being built
            lines.append(f'| {lang} | <a href="{url}">{html.escape(_cell(title))}</a> | {pct} | {fuzzy} | {untranslated} |')
    return "\n".join(head + lines) + "\n"
