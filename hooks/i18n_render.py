"""MkDocs hook: build each language's pages and site-wide strings from its catalogs.

A thin wrapper over :mod:`coursekit`: ``render_checked()`` does the work and also runs without
MkDocs. Warnings go to a ``mkdocs.*`` logger, so ``mkdocs build --strict`` counts them.
"""
from __future__ import annotations

import logging
import posixpath
from pathlib import Path

from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

from coursekit import catalog as po
from coursekit.extract import SITE_CONFIG_KEYS
from coursekit.build_context import built_translations, check_of, interface_of, language_of, project_of
from coursekit.check import page_warnings, refused_messages, translation_warnings
from coursekit.interface import MADE_WITH, NOT_FOUND_HOME, NOT_FOUND_TEXT, NOT_FOUND_TITLE, PERMALINK
from coursekit.notice import with_notice
from coursekit.page_guard import render_checked
from coursekit.status_page import STATUS_PAGE_URI, status_markdown

log = logging.getLogger("mkdocs.hooks.i18n_render")

@event_priority(-110)  # after mkdocs-static-i18n has set up the language's config
def on_config(config):
    """Translate site name and description, the heading permalinks' tooltip and the
    footer's credit line for the language being built."""
    language, default = language_of(config)
    project = project_of(config)  # mkdocs.yml as written: the English strings, the msgids
    table = {}
    if language != default:
        path = project.site_catalog_path(language)
        refused = refused_messages(project, path, check_of(config))  # on_pre_build warns about them
        table = {k: v for k, v in po.translations(po.load_cached(path)).items() if k not in refused}
    for key in SITE_CONFIG_KEYS:
        english = project.config.get(key)
        if english:
            config[key] = table.get(english, english)
    ui = interface_of(config)
    config.extra["course_ui"] = {  # for templates: docs/overrides/404.html
        "not_found_title": ui.text(NOT_FOUND_TITLE),
        "not_found_text": ui.text(NOT_FOUND_TEXT),
        "not_found_home": ui.text(NOT_FOUND_HOME),
        "made_with": _around(ui.text(MADE_WITH, generator=_LINK), MADE_WITH.msgid % {"generator": _LINK}),
    }
    toc = config.mdx_configs.get("toc")
    if toc is not None and toc.get("permalink"):  # Python-Markdown's toc writes it as the title
        toc["permalink_title"] = ui.text(PERMALINK)
    return config


_LINK = "\x00"  # where the footer template puts the link


def _around(text: str, english: str) -> list[str]:
    """The text before and after the link, for docs/overrides/partials/copyright.html."""
    before, found, after = text.partition(_LINK)
    return [before, after] if found else english.split(_LINK, 1)


def on_pre_build(config):
    """Check every translation's catalogs once, while the default language builds
    (mkdocs-static-i18n builds it first), before any page is read.

    A catalog that cannot be read stops the build with ``file:line: reason``. Container
    syntax a page uses but mkdocs.yml does not enable (:func:`coursekit.check.page_warnings`)
    and everything else :func:`coursekit.check.translation_warnings` finds, in every
    language the build builds, is a warning, so one ``mkdocs build --strict`` names the problems of all
    languages, not only of the first language it builds; a preview of some languages
    (``course serve --lang sv``) warns about those only.
    """
    project = project_of(config)
    language, default = language_of(config)
    if language != default:
        return
    for warning in page_warnings(project):  # syntax the site does not enable renders as text
        log.warning(warning)
    for code in built_translations(config):  # a po.CatalogError stops the build with file:line: reason
        for warning in translation_warnings(project, code, check_of(config)):
            log.warning(warning)


@event_priority(-120)  # after mkdocs-static-i18n, which only handles files from docs_dir
def on_files(files, config):
    """Add the generated translation status page under the language being built."""
    if files.get_file_from_path(STATUS_PAGE_URI) is None:
        language, default = language_of(config)
        page = File.generated(config, STATUS_PAGE_URI, content="# Translation status\n")
        if language != default:
            page.dest_uri = f"{language}/{page.dest_uri}"
        files.append(page)
    return files


def on_page_markdown(markdown, page, config, files):
    """Render the English page in the language being built; missing or unsafe messages stay
    English, and a page that is not fully translated says so at the top."""
    project = project_of(config)
    language, default = language_of(config)
    if page.file.src_uri == STATUS_PAGE_URI:
        return status_markdown(project, language, interface_of(config), check_of(config))
    if language == default:
        return markdown
    catalog = po.load_cached(project.catalog_path(language, page.file.src_uri))
    # A missing catalog renders like an empty one (on_pre_build warned), notice included.
    result = render_checked(markdown, po.translations(catalog), check_of(config).page(markdown), project.engine,
                            fallback_lang=default)
    # on_pre_build warned about result.missing and result.rejected; both show in English.
    if result.translated < result.total or catalog is None:
        english = page.url[len(language) + 1:] if page.url.startswith(f"{language}/") else page.url
        url = posixpath.relpath("/" + english, "/" + page.url) + ("/" if english.endswith("/") or not english else "")
        return with_notice(result.markdown, 0 if catalog is None else result.percent, url, interface_of(config), default)
    return result.markdown


def on_serve(server, config, builder):
    """Rebuild when a catalog changes, not only docs/."""
    server.watch(str(Path(config.config_file_path).parent / "i18n"))
    return server
