"""The po-i18n plugin's options (``plugins: - po-i18n: {...}`` in mkdocs.yml).

Declared with MkDocs's own config options (``mkdocs.config.config_options``), as Material's
plugins declare theirs, so a wrong type or value stops the build with MkDocs's one-line
"Config value 'plugins': Plugin 'po-i18n' option 'untranslated': ..." message. The command
line reads the same keys from mkdocs.yml (:class:`po_i18n.project.Project`).
"""
from __future__ import annotations

from mkdocs.config import base
from mkdocs.config import config_options as c

from .verdicts import DEFAULT_FOLDER

__all__ = ["PoI18nConfig"]


class PoI18nConfig(base.Config):
    """Options, each with its default.

    * ``catalogs`` (``"i18n"``): the folder of the catalogs, relative to mkdocs.yml:
      ``<catalogs>/<locale>/<page>.po`` per page, ``<catalogs>/<locale>/_site.po`` for the
      site name, description and the plugin's own strings.
    * ``untranslated`` (``"fail"``): what a page's untranslated or fuzzy messages are (they
      show in English, under the notice): ``fail``, a warning, so ``mkdocs build --strict``
      fails; ``warn``, an info line, so English can be published ahead of its
      translations. An unsafe translation, an unreadable catalog or a wrong header is
      always a warning.
    * ``notice`` (``true``): a page whose translation is incomplete or outdated starts with
      a notice saying how much is translated, linking the English page.
    * ``status_page`` (none): a page path (``translation-status.md``) where the plugin
      generates a table of how much of each page is translated, in every language; put it
      in ``nav`` (or not) like any page. Unset: no status page.
    * ``interface_strings`` (``{}``): more interface-string catalogs for a site's own
      hooks or templates, ``name: module:attribute`` (a tuple of
      :class:`po_i18n.interface.UIString`), each translated in ``_<name>.po``.
    * ``translator_guide`` (none): where your translators' guide is (a path or URL); new
      catalogs' headers and every refused translation's remedy point there.
    * ``search_per_language`` (``true``): with the Material theme and its search plugin,
      each language gets its own search index (``<locale>/search/search_index.json``, split
      from mkdocs-static-i18n's merged one) with Material's pipeline for that language, and
      a search worker (``assets/javascripts/workers/po-i18n-search.js``) that treats a query
      as the indexed text is treated (Japanese segmented, Turkish lower-cased the Turkish
      way): :mod:`po_i18n.search`. Another theme or no search plugin: nothing changes.
    * ``cache`` (``true``) and ``cache_dir`` (``.cache/plugin/po-i18n``, relative to
      mkdocs.yml): the safety check's verdicts are kept in ``<cache_dir>/verdicts.json``
      and reused by the next build while nothing they depend on changed
      (:mod:`po_i18n.verdicts`; ``po-i18n check`` and ``stats`` use them too); a build
      gives the same pages and warnings either way. With ``cache``, each code block is
      also highlighted once per process, not once per language (:mod:`po_i18n.highlight_memo`;
      the same pages byte for byte).
    """

    catalogs = c.Type(str, default="i18n")
    untranslated = c.Choice(("fail", "warn"), default="fail")
    notice = c.Type(bool, default=True)
    status_page = c.Optional(c.Type(str))
    interface_strings = c.Type(dict, default={})
    translator_guide = c.Optional(c.Type(str))
    search_per_language = c.Type(bool, default=True)
    cache = c.Type(bool, default=True)
    cache_dir = c.Type(str, default=DEFAULT_FOLDER)
