"""Material's language selector on a page mkdocs-static-i18n does not know: a generated one.

mkdocs-static-i18n points each entry of the selector (``config.extra.alternate``, Material's
"Site language selector", https://squidfunk.github.io/mkdocs-material/setup/changing-the-language/)
at the current page's version in that language, but only for files from ``docs_dir`` it has
sorted by language (``mkdocs_static_i18n/reconfigure.py``, ``reconfigure_page_context``, called
from its ``on_page_context`` at priority 50). A page a plugin generates keeps the links the
previous page left there. :func:`point_selector` sets them for such a page.
"""
from __future__ import annotations

from copy import deepcopy

from mkdocs.structure.files import File

from .build_context import i18n_plugin

__all__ = ["language_url", "point_selector"]


def language_url(config, uri: str, language: str) -> str:
    """The URL of page ``uri`` (its source path under ``docs_dir``) in ``language``, relative
    to the site root, as MkDocs writes a file's ``url`` (``translation-status/``, or with
    ``use_directory_urls: false`` ``translation-status.html``): the default language's at
    its usual place, every other language's under its locale (``ru/translation-status/``),
    where mkdocs-static-i18n (``docs_structure: suffix``) and the po-i18n plugin put pages."""
    url = File(uri, src_dir=None, dest_dir="", use_directory_urls=config.use_directory_urls).url
    plugin = i18n_plugin(config)
    default = plugin.default_language if plugin is not None else language
    return url if language == default else f"{language}/{url}"


def point_selector(config, uri: str) -> None:
    """Point every entry of ``config.extra.alternate`` at the page ``uri`` in its language.

    ``uri``: the page's source path, as under ``docs_dir`` (``"translation-status.md"``);
    the default language's copy is at its usual URL (``translation-status/``), every other
    language's under its locale (``ru/translation-status/``), where mkdocs-static-i18n and
    the po-i18n plugin put generated pages. Each entry's ``link`` is set as
    mkdocs-static-i18n sets it for a page it knows (a file's ``url``, relative to the site
    root; Material's template passes it through the ``url`` filter). Entries with a fixed
    link to another site (``http...``) are left alone. Call it from an ``on_page_context``
    that runs after mkdocs-static-i18n's (priority below 50). Without mkdocs-static-i18n or
    without a selector, nothing changes.
    """
    plugin = i18n_plugin(config)
    base = getattr(plugin, "extra_alternate", None) if plugin is not None else None
    if not base:
        return
    alternates = deepcopy(base)  # the language roots, as mkdocs-static-i18n computed them
    for entry in alternates:
        if str(entry.get("link", "")).startswith(("http://", "https://")):
            continue
        entry["link"] = language_url(config, uri, entry.get("lang"))
    # Both places: mkdocs-static-i18n sets the item per language and an attribute per page
    # (``config.extra.alternate = ...`` on MkDocs's plain SubConfig), and Jinja's
    # ``config.extra.alternate`` in Material's partials/alternate.html reads the attribute first.
    config.extra["alternate"] = alternates
    setattr(config.extra, "alternate", alternates)
