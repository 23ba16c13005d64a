"""What an MkDocs build is doing: which project and which language, for the plugin and
for a site's own hooks (the public API they read the build through).

Reads only attributes of the MkDocs config (``config_file_path``, ``markdown_extensions``,
the mkdocs-static-i18n plugin's ``current_language``/``default_language``), so it imports
nothing from MkDocs.
"""
from __future__ import annotations

from pathlib import Path

from . import catalog as po
from .check import refused_messages
from .filecache import StatCache
from .interface import Interface, interface_for
from .project import SITE_DOMAIN, Project
from .safety import TranslationCheck, check_for

__all__ = ["built_translations", "check_of", "i18n_plugin", "plugin_of", "interface_of", "language_of", "project_of"]


_project = StatCache(Project.load)


def project_of(config) -> Project:
    """The project of the mkdocs.yml being built, read again only when that file changes
    (``mkdocs serve`` reloads the config but keeps this package imported)."""
    return _project(Path(config.config_file_path))


def i18n_plugin(config):
    """The mkdocs-static-i18n plugin instance of the build, or ``None`` without it."""
    return config.plugins.get("i18n")


def plugin_of(config):
    """The po-i18n plugin instance of the build, or ``None`` without it."""
    return config.plugins.get("po-i18n")


def language_of(config) -> tuple[str, str]:
    """``(language being built, default language)`` as mkdocs-static-i18n reports them;
    ``("en", "en")`` without the plugin."""
    plugin = i18n_plugin(config)
    if plugin is None:
        return "en", "en"
    return plugin.current_language or plugin.default_language, plugin.default_language


def built_translations(config) -> tuple[str, ...]:
    """The translation languages this build builds, in the project's order: those
    mkdocs-static-i18n's ``build_languages`` lists (a preview of some languages,
    ``po-i18n serve --lang sv``, sets ``build: false`` on the others), the default language
    left out; every language of the project without the plugin."""
    project = project_of(config)
    plugin = i18n_plugin(config)
    if plugin is None:
        return tuple(project.languages)
    built = set(plugin.build_languages)
    return tuple(code for code in project.languages if code in built)


def check_of(config) -> TranslationCheck:
    """The safety check of the build: that of the project's mkdocs.yml as written
    (:attr:`po_i18n.project.Project.engine`), the engine ``po-i18n check`` and the page
    rendering use too. Not the build's own config: a hook changes its toc options per
    language (the permalink tooltip), which changes nothing the check compares (both
    sides of every comparison use one engine) but would give each language, and each
    ``mkdocs serve`` rebuild, caches of its own."""
    return check_for(project_of(config).engine)


def interface_of(config, domain: str = SITE_DOMAIN) -> Interface:
    """Interface strings of one domain in the language being built (English for the
    default language): ``site`` for the engine's (``_site.po``), or a name the plugin's
    ``interface_strings`` option gives (``_<name>.po``); a translation the safety check
    refuses shows in English.

    Raises:
        po_i18n.catalog.CatalogError: the language's interface catalog cannot be read.
    """
    language, default = language_of(config)
    if language == default:
        return interface_for(None)
    project = project_of(config)
    path = project.interface_catalog_path(language, domain)
    catalog = po.load_cached(path)
    return interface_for(catalog, frozenset(refused_messages(project, path, check_of(config))))
