"""MkDocs hook: the publish gate. Every code block included from snippets/ gets a badge
saying how its program was proven; a program without a passing run for its current
content gets a "not verified" badge and a build warning, so ``mkdocs build --strict``
refuses to publish it. So does a program whose sections some page shows while no page
shows its command (its ``launch`` section). Each block's title (``train.py``) links to the
page of the whole program (``hooks/program_pages.py``).

A thin wrapper over :mod:`coursekit.gate`, which also works without MkDocs.
"""
from __future__ import annotations

import logging
from pathlib import Path

from mkdocs.utils import get_relative_url

from po_i18n.build_context import interface_of, project_of
from coursekit.course_strings import PROGRAM_LINK
from coursekit.gate import add_badges, commands_not_shown
from coursekit.programs import link_titles, page_uri

log = logging.getLogger("mkdocs.hooks.verification_gate")
_warned: set[tuple[str, str]] = set()
_titles: dict[str, dict[str, str]] = {}  # each page's block titles by program, from on_page_markdown


def on_files(files, config):
    """Warn, once per program, about a program shown on some page without its command."""
    pages = {page.src_uri: Path(page.abs_src_path).read_text(encoding="utf-8-sig")
             for page in files.documentation_pages() if page.abs_src_path}
    for problem in commands_not_shown(pages, project_of(config).root / "snippets"):
        if ("", problem) not in _warned:
            _warned.add(("", problem))
            log.warning(problem)
    return files


def on_page_markdown(markdown, page, config, files):
    """Put a badge under every included code block; warn about unverified programs."""
    result = add_badges(markdown, page.file.src_uri, project_of(config), interface_of(config, "course"))
    for problem in result.problems:
        if (page.file.src_uri, problem) not in _warned:
            _warned.add((page.file.src_uri, problem))
            log.warning(f"{page.file.src_uri}: {problem}")
    _titles[page.file.src_uri] = result.titles
    return result.markdown


def on_page_content(html, page, config, files):
    """Link each code block's title to the page of its whole program (not on that page itself)."""
    links = {}
    for title, program in _titles.pop(page.file.src_uri, {}).items():
        target = files.get_file_from_path(page_uri(program))
        if target is not None and target is not page.file:
            links[title] = get_relative_url(target.url, page.file.url)
    if not links:
        return html
    return link_titles(html, links, interface_of(config, "course").text(PROGRAM_LINK))


def on_serve(server, config, builder):
    """Badges follow snippets/verification/ and the programs: rebuild when they change."""
    server.watch(str(Path(config.config_file_path).parent / "snippets"))
    return server
