"""MkDocs hook: the publish gate. Every code block included from snippets/ gets a badge
saying how its program was proven; a program without a passing run for its current
content gets a "not verified" badge and a build warning, so ``mkdocs build --strict``
refuses to publish it. So does a program whose sections some page shows while no page
shows its command (its ``launch`` section).

A thin wrapper over :mod:`coursekit.gate`, which also works without MkDocs.
"""
from __future__ import annotations

import logging
from pathlib import Path


from po_i18n.build_context import interface_of, project_of
from coursekit.gate import add_badges, commands_not_shown

log = logging.getLogger("mkdocs.hooks.verification_gate")
_warned: set[tuple[str, str]] = set()


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
    return result.markdown


def on_serve(server, config, builder):
    """Badges follow snippets/verification/ and the programs: rebuild when they change."""
    server.watch(str(Path(config.config_file_path).parent / "snippets"))
    return server
