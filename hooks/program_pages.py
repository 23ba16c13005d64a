"""MkDocs hook: a page for every program the lessons show, in every language, with its full
source, its command, its badge and a download of its files as verified
(:mod:`coursekit.programs`). Each code block's title links there
(``hooks/verification_gate.py``).

The pages are generated (``File.generated``), so no catalog translates them: their few
sentences are the course's interface strings (``i18n/<lang>/_course.po``), and the code is
code. They are not in the navigation; the language selector of each leads to the same
program in the other languages.
"""
from __future__ import annotations

import os
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, InclusionLevel
from mkdocs.utils import get_markdown_title

from coursekit.gate import shown_programs
from coursekit.programs import Program, bundle, page_markdown, program
from po_i18n.build_context import interface_of, language_of, project_of
from po_i18n.filecache import stamps
from po_i18n.selector import point_selector

# The program of each generated page, and the English pages that show it (the one with its
# command first), for the build under way; set by on_files, read by the later events.
_pages: dict[str, tuple[Program, list[str]]] = {}
# What each page of each language was last written from, for ``mkdocs serve``'s dirty
# rebuilds (the only builds that ask File.is_modified): (language, page) -> file stamps.
_built: dict[tuple[str, str], tuple] = {}
_pending: dict[tuple[str, str], tuple] = {}


def _inputs(prog: Program, shown: list[str], project, language: str) -> tuple:
    """Stamps of every file a program's page is made from: the program's files, the
    records, the language's interface catalogs, the pages showing it and their catalogs
    (their titles)."""
    root = project.root
    files = [root / "snippets" / f for f in prog.files] + sorted((root / "snippets" / "verification").glob("*.json"))
    files += list(project.interface_catalogs(language)) + [project.docs_dir / uri for uri in shown]
    files += [project.catalog_path(language, uri) for uri in shown]
    return stamps(tuple(files))


def _modified(key: tuple[str, str], inputs: tuple, dest: str):
    """``File.is_modified`` of a program's page: whether a dirty rebuild must write it again."""
    changed = _built.get(key) != inputs or not os.path.isfile(dest)
    if changed:
        _pending[key] = inputs
    return lambda: changed


@event_priority(-120)  # after mkdocs-static-i18n has chosen the language's files
def on_files(files, config):
    """Add each shown program's page (under the language's folder) and its files (at the
    site root, the same bytes for every language)."""
    language, default = language_of(config)
    project = project_of(config)
    snippets = project.root / "snippets"
    pages = {page.src_uri: Path(page.abs_src_path).read_text(encoding="utf-8-sig")
             for page in files.documentation_pages() if page.abs_src_path}
    _pages.clear()
    for name, shown in shown_programs(pages, snippets).items():
        prog = program(name, snippets)
        _pages[prog.page] = (prog, shown)
        page = File.generated(config, prog.page, content="", inclusion=InclusionLevel.NOT_IN_NAV)
        if language != default:
            page.dest_uri = f"{language}/{page.dest_uri}"
        page.is_modified = _modified((language, prog.page), _inputs(prog, shown, project, language), page.abs_dest_path)
        files.append(page)
        for file, download in zip(prog.files, prog.downloads):
            if files.get_file_from_path(download) is None:  # a file of two programs (multinode_train.py)
                files.append(File.generated(config, download, abs_src_path=str(snippets / file)))
        if prog.bundle is not None:
            files.append(File.generated(config, prog.bundle, content=bundle(prog, snippets)))
    return files


def _title(uri: str, files) -> str:
    """A page's title in the language being built: its rendered h1 (pages are rendered in
    the order of their files, so the lessons come before the generated pages), else the
    h1 of its Markdown."""
    file = files.get_file_from_path(uri)
    page = file.page if file is not None else None
    if page is not None and page.title:
        return page.title
    return get_markdown_title(file.content_string) if file is not None else uri


def on_page_markdown(markdown, page, config, files):
    """Write a program's page in the language being built."""
    entry = _pages.get(page.file.src_uri)
    if entry is None or page.file.generated_by is None:
        return markdown
    prog, shown = entry
    # Reached from a code block and left for the lesson: no navigation sidebar to render and
    # no entry in the search index, which already holds every section the lessons show
    # (Material's front matter options ``hide`` and ``search.exclude``).
    page.meta.update(hide=["navigation"], search={"exclude": True})
    lessons = [(uri, _title(uri, files)) for uri in shown]
    return page_markdown(prog, project_of(config).root / "snippets", interface_of(config, "course"), lessons)


@event_priority(0)  # after mkdocs-static-i18n (50), which only knows the files of docs/
def on_page_context(context, page, config, nav):
    """Point the language selector of a program's page at the same program in each language."""
    if page.file.src_uri in _pages:
        point_selector(config, page.file.src_uri)
    return context


def on_post_build(config):
    """The pages marked for writing were written: remember what they were made from."""
    _built.update(_pending)
    _pending.clear()
