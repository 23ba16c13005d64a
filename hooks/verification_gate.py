"""MkDocs hook: the publish gate. Every code block included from snippets/ gets a badge
saying how its program was proven; a program without a passing run for its current
content gets a "not verified" badge and a build warning, so ``mkdocs build --strict``
refuses to publish it.

A thin wrapper over :mod:`coursekit.gate`, which also works without MkDocs.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path

from mkdocs.exceptions import PluginError

from coursekit import catalog as po
from coursekit.gate import add_badges
from coursekit.interface import Interface, interface_for
from coursekit.project import Project

log = logging.getLogger("mkdocs.hooks.verification_gate")
_warned: set[tuple[str, str]] = set()


@functools.lru_cache(maxsize=4)
def _project(config_file: str) -> Project:
    return Project.load(config_file)


def _interface(project: Project, language: str) -> Interface:
    if language == project.default_language:
        return interface_for(None)
    try:
        return interface_for(po.load_cached(project.site_catalog_path(language)))
    except po.CatalogError as exc:
        raise PluginError(str(exc)) from None


def on_page_markdown(markdown, page, config, files):
    """Put a badge under every included code block; warn about unverified programs."""
    project = _project(config.config_file_path)
    plugin = config.plugins.get("i18n")
    language = plugin.current_language if plugin else project.default_language
    result = add_badges(markdown, page.file.src_uri, project, _interface(project, language))
    for problem in result.problems:
        if (page.file.src_uri, problem) not in _warned:
            _warned.add((page.file.src_uri, problem))
            log.warning(f"{page.file.src_uri}: {problem}")
    return result.markdown


def on_serve(server, config, builder):
    """Badges follow snippets/verification.json and the programs: rebuild when they change."""
    server.watch(str(Path(config.config_file_path).parent / "snippets"))
    return server
