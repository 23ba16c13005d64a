"""The generated translation status page: per language, how much of each page is translated."""
from __future__ import annotations

import html
from pathlib import Path

from . import catalog as po
from .interface import (PERCENT, STATUS_FUZZY, STATUS_INTRO, STATUS_LANGUAGE, STATUS_PAGE, STATUS_TITLE, STATUS_TRANSLATED,
                        STATUS_UNTRANSLATED, Interface)
from .project import Project
from .render import render
from .safety import accept
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


def _rows(project: Project, language: str, ui: Interface) -> list[tuple[Path, str, str, int, int]]:
    rows = []
    for page in project.pages():
        catalog = po.load_cached(project.catalog_path(language, page))
        title = _title(project, page, language, catalog)
        if catalog is not None:
            st = catalog_stats(catalog)
            # the share the reader sees, computed as the page's notice computes it
            source = (project.docs_dir / page).read_text(encoding="utf-8")
            shown = render(source, po.translations(catalog), accept=accept, engine=project.engine).percent
            rows.append((page, title, ui.text(PERCENT, percent=int(shown)), st.fuzzy, st.untranslated))
        else:
            rows.append((page, title, ui.text(PERCENT, percent=0), 0, 0))
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def status_markdown(project: Project, language: str, ui: Interface) -> str:
    """The status page's Markdown for one language (a default-language page lists the
    translations; titles come from each catalog's first heading message).

    On a translation's site it lists that language's pages; on the default language's
    site it lists every translation language, each row linking to the translated page.
    """
    head = [f"# {ui.text(STATUS_TITLE)} {{ #translation-status }}", "", ui.text(STATUS_INTRO), ""]
    cols = [ui.text(STATUS_PAGE), ui.text(STATUS_TRANSLATED), ui.text(STATUS_FUZZY), ui.text(STATUS_UNTRANSLATED)]
    if language != project.default_language:
        lines = ["| " + " | ".join(cols) + " |", "| --- | ---: | ---: | ---: |"]
        for page, title, pct, fuzzy, untranslated in _rows(project, language, ui):
            lines.append(f"| [{_cell(title)}]({page.as_posix()}) | {pct} | {fuzzy} | {untranslated} |")
        return "\n".join(head + lines) + "\n"
    lines = ["| " + " | ".join([ui.text(STATUS_LANGUAGE), *cols]) + " |", "| --- | --- | ---: | ---: | ---: |"]
    for lang in project.languages:
        for page, title, pct, fuzzy, untranslated in _rows(project, lang, ui):
            stem = page.with_suffix("").as_posix()
            url = f"../{lang}/" if stem == "index" else f"../{lang}/{stem}/"
            # raw HTML: MkDocs only resolves links between pages of the language being built
            lines.append(f'| {lang} | <a href="{url}">{html.escape(_cell(title))}</a> | {pct} | {fuzzy} | {untranslated} |')
    return "\n".join(head + lines) + "\n"
