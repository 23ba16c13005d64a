"""Where a site's pages, catalogs and languages are, read from mkdocs.yml.

The command line reads mkdocs.yml without running MkDocs, so the plugin's options
(``plugins: - po-i18n: {...}``, :mod:`po_i18n.config`) are read here from the same file,
with the same defaults the plugin has.
"""
from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from mkdocs.utils.yaml import get_yaml_loader

from .catalog_file import CatalogError, place_problem

__all__ = ["Project", "ProjectError"]

SITE_CATALOG = "_site"  # i18n/<lang>/_site.po: strings that belong to no single page
SITE_DOMAIN = "site"  # the engine's own interface strings and mkdocs.yml values, in _site.po
PLUGIN = "po-i18n"  # the plugin's name in mkdocs.yml (its entry point in pyproject.toml)


def _loader() -> type:
    """MkDocs's YAML loader (``!ENV`` tags), reading ``!relative`` paths as plain strings."""
    base = get_yaml_loader()
    loader = type("CourseYamlLoader", (base,), {})
    loader.add_constructor("!relative", lambda ldr, node: ldr.construct_scalar(node))
    return loader


class ProjectError(Exception):
    """The project layout or mkdocs.yml is not usable; the message says why and what to do."""


@dataclass(frozen=True)
class Project:
    """The paths and languages of one MkDocs project.

    Attributes:
        root: the folder holding mkdocs.yml, resolved: no symbolic link is in it, so one
            in a catalog's path lies under the root (:mod:`po_i18n.catalog_file`).
        docs_dir: the English pages (mkdocs.yml ``docs_dir``, default ``docs``).
        i18n_dir: the catalogs, ``<root>/i18n``.
        default_language: the source language (the i18n plugin's default, ``en``).
        languages: the translation languages, in mkdocs.yml order, without the default.
        config: the parsed mkdocs.yml mapping.
        config_file: the mkdocs.yml it was read from.
        options: the po-i18n plugin's options as written in mkdocs.yml (``{}`` without
            them); :attr:`catalogs` and :attr:`interface_strings` read them.
    """

    root: Path
    docs_dir: Path
    i18n_dir: Path
    default_language: str
    languages: tuple[str, ...]
    config: dict
    config_file: Path | None = None
    options: dict = field(default_factory=dict)

    @property
    def engine(self):
        """The site's Markdown engine (:func:`po_i18n.markdown_engine.engine_for` of
        this mkdocs.yml): what decides blocks, titles, code and prose of its pages."""
        from .markdown_engine import engine_for

        return engine_for(self.config_file or self.root / "mkdocs.yml")

    @classmethod
    def load(cls, config_file: Path | str = "mkdocs.yml") -> "Project":
        """Read a project from its mkdocs.yml.

        Args:
            config_file: path to mkdocs.yml.

        Returns:
            The :class:`Project`.

        Raises:
            ProjectError: the file is missing or has no mkdocs-static-i18n ``i18n``
                plugin with languages.
        """
        path = Path(config_file).resolve()
        if not path.is_file():
            raise ProjectError(f"{config_file}: no such file; run from the project root or pass --config PATH")
        with path.open(encoding="utf-8") as f:
            config = yaml.load(f, Loader=_loader()) or {}
        i18n = None
        for plugin in config.get("plugins") or []:
            if isinstance(plugin, dict) and "i18n" in plugin:
                i18n = plugin["i18n"] or {}
        if not i18n or not i18n.get("languages"):
            raise ProjectError(f"{path}: the i18n plugin has no 'languages'; add them under plugins: - i18n: languages:")
        default = next((l["locale"] for l in i18n["languages"] if l.get("default")), "en")
        others = tuple(l["locale"] for l in i18n["languages"] if l["locale"] != default)
        options = {}
        for plugin in config.get("plugins") or []:
            if isinstance(plugin, dict) and PLUGIN in plugin:
                options = plugin[PLUGIN] or {}
        if not isinstance(options, dict):
            raise ProjectError(f"{path}: the {PLUGIN} plugin's options must be a mapping (key: value lines under "
                               f"'- {PLUGIN}:'); see the po-i18n README")
        root = path.parent
        return cls(
            root=root,
            docs_dir=root / config.get("docs_dir", "docs"),
            i18n_dir=root / str(options.get("catalogs", "i18n")),
            default_language=default,
            languages=others,
            config=config,
            config_file=path,
            options=options,
        )

    @functools.cached_property  # imported once per Project (Project.load is cached per mkdocs.yml)
    def interface_strings(self) -> dict[str, tuple]:
        """The interface-string domains: ``{"site": the engine's strings}`` and, for each
        entry ``name: "module:attribute"`` of the plugin's ``interface_strings`` option, the
        tuple of :class:`po_i18n.interface.UIString` that attribute holds, translated
        through ``<catalogs>/<lang>/_<name>.po``.

        Raises:
            ProjectError: an entry cannot be imported or is not a tuple of UIString.
        """
        from .interface import STRINGS, UIString

        domains: dict[str, tuple] = {SITE_DOMAIN: STRINGS}
        for name, where in (self.options.get("interface_strings") or {}).items():
            module, _, attribute = str(where).partition(":")
            try:
                strings = tuple(getattr(importlib.import_module(module), attribute))
            except (ImportError, AttributeError, TypeError, ValueError) as exc:
                raise ProjectError(f"{self.config_file}: interface_strings: {name}: cannot import {where!r} ({exc}); "
                                   "write it as module:attribute, a tuple of po_i18n.interface.UIString") from None
            if name == SITE_DOMAIN or not all(isinstance(s, UIString) for s in strings):
                raise ProjectError(f"{self.config_file}: interface_strings: {name}: {where!r} must be a tuple of "
                                   f"po_i18n.interface.UIString under a name other than '{SITE_DOMAIN}'")
            domains[str(name)] = strings
        return domains

    def interface_catalog_path(self, language: str, domain: str = SITE_DOMAIN) -> Path:
        """``<catalogs>/<language>/_<domain>.po``; ``_site.po`` for the engine's own strings."""
        return self.i18n_dir / language / f"_{domain}.po"

    def interface_catalogs(self, language: str) -> dict[Path, str]:
        """Every interface catalog of a language, ``{path: domain}``, ``_site.po`` first."""
        return {self.interface_catalog_path(language, domain): domain for domain in self.interface_strings}

    def domain_of(self, path: Path) -> str | None:
        """The interface domain a catalog path holds, or ``None`` for a page's catalog."""
        name = path.name
        if path.parent.parent != self.i18n_dir or not (name.startswith("_") and name.endswith(".po")):
            return None
        domain = name[1:-3]
        return domain if domain == SITE_DOMAIN or domain in (self.options.get("interface_strings") or {}) else None

    def pages(self) -> list[Path]:
        """The English Markdown pages, relative to ``docs_dir``, sorted."""
        return sorted(p.relative_to(self.docs_dir) for p in self.docs_dir.rglob("*.md"))

    def catalog_path(self, language: str, page: Path | str) -> Path:
        """``i18n/<language>/<page without .md>.po`` for a page path relative to docs_dir."""
        return self.i18n_dir / language / Path(page).with_suffix(".po")

    def catalog_files(self, language: str) -> list[Path]:
        """Every catalog of one language (``i18n/<language>/**/*.po``), sorted, with what
        only looks like one, for the readers to refuse (:func:`po_i18n.catalog.load`):
        a directory or link named ``*.po``, and a link to a folder, which is listed but
        not entered (nothing outside ``i18n/`` is listed).

        Raises:
            po_i18n.catalog.CatalogError: ``i18n/`` or ``i18n/<language>/`` is a
                symbolic link (:func:`po_i18n.catalog_file.place_problem`).
        """
        folder = self.i18n_dir / language
        problem = place_problem(folder)
        if problem:
            raise CatalogError(folder, None, problem)
        found = []
        for top, folders, files in os.walk(folder):  # followlinks=False: a linked folder is listed, not entered
            found += [Path(top, name) for name in files if name.endswith(".po")]
            found += [Path(top, name) for name in folders if name.endswith(".po") or Path(top, name).is_symlink()]
        return sorted(found)

    def orphan_catalogs(self, language: str) -> list[Path]:
        """The catalogs of a language that belong to no English page (its page was
        renamed or deleted), sorted; interface catalogs (``_site.po``…) are never one."""
        pages = {self.catalog_path(language, page) for page in self.pages()}
        return [path for path in self.catalog_files(language)
                if path not in pages and self.domain_of(path) is None]

    def site_catalog_path(self, language: str) -> Path:
        """``i18n/<language>/_site.po``: site name, description and the engine's strings."""
        return self.interface_catalog_path(language, SITE_DOMAIN)
