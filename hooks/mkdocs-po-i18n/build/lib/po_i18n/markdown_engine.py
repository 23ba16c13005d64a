"""The site's own Markdown engine: Python-Markdown with the extensions mkdocs.yml configures.

Whether a line is a block, a title, code or prose, and what a translation renders to, is
decided by the engine MkDocs renders pages with, not by CommonMark. MkDocs 1.6 builds it
per page as ``markdown.Markdown(extensions=config['markdown_extensions'],
extension_configs=config['mdx_configs'])`` (``mkdocs/structure/pages.py``,
``Page.render``), where ``markdown_extensions`` always starts with the built-ins
``toc``, ``tables`` and ``fenced_code`` (``mkdocs/config/defaults.py``). This module
builds the same engine, from a loaded MkDocs config (inside a build) or from a
``mkdocs.yml`` (the ``course`` command, tests), so the segmenter and the safety check
share one definition of "the site's Markdown".
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import markdown

from .filecache import StatCache

__all__ = ["DEFAULT_ENGINE", "MarkdownEngine", "engine_for", "engine_of"]


@dataclass(frozen=True)
class MarkdownEngine:
    """The Markdown extensions of one site and their options.

    Attributes:
        extensions: extension names in the order MkDocs loads them (built-ins first),
            e.g. ``("toc", "tables", "fenced_code", "attr_list", "pymdownx.snippets")``.
        configs: options per extension name (MkDocs's ``mdx_configs``); values may be
            MkDocs path placeholders (``!relative $config_dir/snippets``), which are
            ``os.PathLike`` and resolve when used.
    """

    extensions: tuple[str, ...]
    configs: Mapping[str, Mapping] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        """True when the site enables the extension ``name`` (``"pymdownx.details"``)."""
        return name in self.extensions

    def markdown(self, without: Iterable[str] = ()) -> markdown.Markdown:
        """A new Python-Markdown instance with the site's extensions.

        Args:
            without: extension names to leave out (for example ``"pymdownx.snippets"``,
                so that rendering a string never reads a file).

        Returns:
            A ``markdown.Markdown``; call ``reset()`` between documents.
        """
        skip = set(without)
        names = [n for n in self.extensions if n not in skip]
        return markdown.Markdown(extensions=names,
                                 extension_configs={n: dict(self.configs[n]) for n in names if n in self.configs})

    def convert(self, text: str, without: Iterable[str] = ()) -> str:
        """Render Markdown to HTML (str) with the site's extensions, reusing one
        instance per ``without`` set (Python-Markdown instances are reusable after
        ``reset()``; building one costs about a millisecond per extension)."""
        key = frozenset(without)
        md = _instances.get((self, key))
        if md is None:
            md = _instances[(self, key)] = self.markdown(key)
        md.reset()
        return md.convert(text)

    def configured(self, name: str, **options) -> "MarkdownEngine":
        """The same engine with more options for one of its extensions, e.g.
        ``engine.configured("toc", slugify=f)``; the options are merged over those of
        mkdocs.yml. An extension the engine does not load is left out as before.

        Returns:
            A new :class:`MarkdownEngine` (this one is unchanged).
        """
        if name not in self.extensions:
            return self
        return MarkdownEngine(self.extensions, {**self.configs, name: {**dict(self.configs.get(name, {})), **options}})

    def __eq__(self, other: object) -> bool:
        """Same extensions and the same options, a path placeholder counting as the path it
        resolves to: each load of mkdocs.yml (every ``mkdocs serve`` rebuild) makes new
        ``!relative`` objects, and an engine that never equals the last one would make every
        cache keyed on it (judgements, page verdicts, Markdown instances) start empty."""
        if not isinstance(other, MarkdownEngine):
            return NotImplemented
        return self.extensions == other.extensions and _comparable(self.configs) == _comparable(other.configs)

    def __hash__(self) -> int:
        return hash(self.extensions)


def _comparable(value):
    """``value`` (extension options) with each ``os.PathLike`` replaced by its path; one
    that cannot resolve here (MkDocs's ``!relative`` without ``$config_dir`` needs the page
    being built) stays itself, so it equals only itself."""
    if isinstance(value, Mapping):
        return {k: _comparable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_comparable(v) for v in value]
    if isinstance(value, os.PathLike):
        try:
            return ("path", os.fspath(value))
        except Exception:  # noqa: BLE001 - MkDocs placeholders raise their own errors outside a build
            return value
    return value


_instances: dict[tuple[MarkdownEngine, frozenset], markdown.Markdown] = {}


def engine_of(config) -> MarkdownEngine:
    """The engine of a loaded MkDocs config (inside a build: the ``config`` a hook gets).

    Args:
        config: a ``mkdocs.config.defaults.MkDocsConfig`` or a mapping with
            ``markdown_extensions`` (list of names) and ``mdx_configs`` (dict).
    """
    # each extension's options copied: hooks change them per language (the toc's
    # permalink_title), and an engine is a cache key that must not change under it
    return MarkdownEngine(tuple(config["markdown_extensions"]),
                          {name: dict(options) for name, options in (config["mdx_configs"] or {}).items()})


def _load(config_file: Path) -> MarkdownEngine:
    """Validate only ``markdown_extensions`` of a mkdocs.yml, with MkDocs's own option
    (``mkdocs/config/defaults.py``: ``MarkdownExtensions(builtins=['toc', 'tables',
    'fenced_code'], configkey='mdx_configs')``) and YAML loader (``!ENV``, ``!relative``,
    ``INHERIT``), so a translator's checkout without hooks/ or snippets/ still has its
    site's engine; the rest of the file is the build's business."""
    from mkdocs import exceptions
    from mkdocs.config import base, config_options as c
    from mkdocs.utils.yaml import get_yaml_loader, yaml_load

    class _ExtensionsConfig(base.Config):
        markdown_extensions = c.MarkdownExtensions(builtins=["toc", "tables", "fenced_code"], configkey="mdx_configs")
        mdx_configs = c.Private()

    config = _ExtensionsConfig(config_file_path=str(config_file))
    with open(config_file, encoding="utf-8") as f:
        data = yaml_load(f, loader=get_yaml_loader(config=config)) or {}
    config.load_dict({"markdown_extensions": data.get("markdown_extensions") or []})
    errors, _ = config.validate()
    if errors:
        raise exceptions.ConfigurationError(
            f"{config_file}: markdown_extensions: {'; '.join(str(e) for _, e in errors)}")
    return engine_of(config)


_loaded = StatCache(_load)


def engine_for(config_file: Path | str) -> MarkdownEngine:
    """The engine a site's ``mkdocs.yml`` configures, its ``markdown_extensions`` read the
    way ``mkdocs build`` reads them (``!ENV`` and ``!relative`` tags, ``INHERIT``, built-in
    extensions added; see :func:`_load`), cached until the file changes.

    Raises:
        mkdocs.exceptions.ConfigurationError: the file is not a valid MkDocs config.
        FileNotFoundError: there is no such file.
    """
    return _loaded(Path(config_file).resolve())


# What a function of this package uses when it is given no engine: MkDocs's built-ins and
# the extensions Material for MkDocs documents in "Setup > Extensions" (Python-Markdown's
# and pymdown-extensions', old- and blocks-style containers both), so that a page of any
# Material site segments as that site renders it. A site passes its own engine
# (engine_for / engine_of) to get exactly its mkdocs.yml.
DEFAULT_ENGINE = MarkdownEngine(
    extensions=("toc", "tables", "fenced_code", "abbr", "admonition", "attr_list", "def_list", "footnotes",
                "md_in_html", "pymdownx.details", "pymdownx.superfences", "pymdownx.tabbed", "pymdownx.tasklist",
                "pymdownx.snippets", "pymdownx.highlight", "pymdownx.inlinehilite", "pymdownx.fancylists",
                "pymdownx.quotes", "pymdownx.blocks.admonition", "pymdownx.blocks.details", "pymdownx.blocks.tab",
                "pymdownx.blocks.html", "pymdownx.blocks.caption", "pymdownx.blocks.definition"),
    configs={"toc": {"permalink": True}, "pymdownx.tabbed": {"alternate_style": True},
             "pymdownx.blocks.tab": {"alternate_style": True}, "pymdownx.quotes": {"callouts": True},
             "pymdownx.tasklist": {"custom_checkbox": True}},
)
