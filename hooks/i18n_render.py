"""MkDocs hook: build each language's pages and site-wide strings from its catalogs.

A thin wrapper over :mod:`coursekit`: ``render()`` does the work and also runs without
MkDocs. Warnings go to a ``mkdocs.*`` logger, so ``mkdocs build --strict`` counts them.
"""
from __future__ import annotations

import functools
import logging
from pathlib import Path

from mkdocs.plugins import event_priority

from coursekit import catalog as po
from coursekit.extract import SITE_CONFIG_KEYS
from coursekit.project import Project
from coursekit.render import render

log = logging.getLogger("mkdocs.hooks.i18n_render")

_english: dict[str, str] = {}  # mkdocs.yml's English site strings, kept across language builds
_cache: dict[Path, tuple[float, dict[str, str] | None]] = {}


@functools.lru_cache(maxsize=4)
def _project(config_file: str) -> Project:
    """The project of a mkdocs.yml, read once per build process."""
    return Project.load(config_file)


def _language(config) -> tuple[str, str]:
    """(language being built, default language) as mkdocs-static-i18n reports them."""
    plugin = config.plugins.get("i18n")
    if plugin is None:
        return "en", "en"
    return plugin.current_language or plugin.default_language, plugin.default_language


def _translations(path: Path) -> dict[str, str] | None:
    """Usable translations of a catalog (None when the file is missing), cached by mtime."""
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        return None
    hit = _cache.get(path)
    if hit is None or hit[0] != mtime:
        try:
            hit = (mtime, po.translations(po.load(path)))
        except po.CatalogError as exc:
            raise SystemExit(str(exc)) from None  # a broken catalog stops the build, in one line
        _cache[path] = hit
    return hit[1]


@event_priority(-110)  # after mkdocs-static-i18n has set up the language's config
def on_config(config):
    """Translate site name and description for the language being built."""
    language, default = _language(config)
    for key in SITE_CONFIG_KEYS:
        _english.setdefault(key, config.get(key) or "")
    if language == default:
        for key in SITE_CONFIG_KEYS:
            config[key] = _english[key]
        return config
    project = _project(config.config_file_path)
    table = _translations(project.site_catalog_path(language)) or {}
    for key in SITE_CONFIG_KEYS:
        if _english[key]:
            config[key] = table.get(_english[key], _english[key])
    return config


def on_page_markdown(markdown, page, config, files):
    """Render the English page in the language being built; missing messages stay English."""
    language, default = _language(config)
    if language == default:
        return markdown
    project = _project(config.config_file_path)
    path = project.catalog_path(language, page.file.src_uri)
    table = _translations(path)
    if table is None:
        log.warning(f"{page.file.src_uri}: no '{language}' catalog {path.relative_to(project.root)}; "
                    f"the page is shown in English; run: course update --lang {language}")
        return markdown
    result = render(markdown, table)
    if result.missing:
        log.warning(f"{page.file.src_uri}: {len(result.missing)} of {result.total} messages have no "
                    f"'{language}' translation and are shown in English; translate them in "
                    f"{path.relative_to(project.root)}")
    return result.markdown


def on_serve(server, config, builder):
    """Rebuild when a catalog or a snippet program changes, not only docs/."""
    root = Path(config.config_file_path).parent
    for folder in ("i18n", "snippets"):
        if (root / folder).is_dir():
            server.watch(str(root / folder))
    return server
