"""The po-i18n MkDocs plugin: every language of a site rendered from gettext catalogs.

A thin wrapper over the engine, whose core works without MkDocs (:func:`po_i18n.render.render`
and :func:`po_i18n.page_guard.render_checked` are pure functions of a page, a catalog
mapping and a Markdown engine). It needs mkdocs-static-i18n (``docs_structure: suffix``),
which builds each language with its own config; this plugin, listed after it, gives each
language's build its pages, site name and description, heading permalink titles and, if
wanted, a status page; with Material's search, one search index per language
(:mod:`po_i18n.search`). Warnings go to the ``mkdocs.plugins.po_i18n`` logger, so
``mkdocs build --strict`` counts them (even under ``-q``).

Event order (MkDocs 1.6, ``mkdocs/plugins.py``): mkdocs-static-i18n's ``on_config`` runs at
priority -100; the preview of some languages must change its config before that (50), and
the translation must read the language it set up after it (-110). The per-language search
indexes are split at -200, after mkdocs-static-i18n's ``on_post_build`` has written the
merged one.
"""
from __future__ import annotations

import logging
import os
import posixpath

from mkdocs.exceptions import PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File

from . import catalog as po
from . import highlight_memo, search, verdicts
from .build_context import check_of, i18n_plugin, interface_of, language_of, project_of
from .check import config_problems, page_warnings, pending_warnings, refused_messages, translation_warnings
from .config import PoI18nConfig
from .dirty import DirtyPages
from .extract import SITE_CONFIG_KEYS, nav_titles
from .interface import PERMALINK
from .notice import with_notice
from .page_guard import render_checked
from .prejudge import prejudge
from .preview import marker, with_preview
from .selector import point_selector
from .status_page import status_markdown

__all__ = ["PoI18nPlugin", "PREVIEW_VARIABLE"]

log = logging.getLogger("mkdocs.plugins.po_i18n")
PREVIEW_VARIABLE = "PO_I18N_PREVIEW_LANGUAGES"  # set by ``po-i18n serve --lang``


def _site_translations(config) -> dict[str, str]:
    """``_site.po``'s usable translations in the language being built, ``{msgid: msgstr}``
    (empty for the default language): those the safety check refuses are left out, so
    they show in English (on_pre_build warns about them)."""
    language, default = language_of(config)
    if language == default:
        return {}
    project = project_of(config)
    path = project.site_catalog_path(language)
    refused = refused_messages(project, path, check_of(config))
    return {k: v for k, v in po.translations(po.load_cached(path)).items() if k not in refused}


class PoI18nPlugin(BasePlugin[PoI18nConfig]):
    """``plugins: [search, i18n: {...}, po-i18n: {...}]``; options: :class:`po_i18n.config.PoI18nConfig`."""

    supports_multiple_instances = False
    _dirty: DirtyPages | None = None  # under --dirty: what each page was last rendered from
    _preview = False  # under mkdocs serve (po-i18n serve): marks and the place keeper (po_i18n.preview)

    def on_startup(self, command, dirty):
        """Note whether rebuilds are dirty (``mkdocs serve --dirty``, which ``po-i18n serve``
        uses): then a page is rendered again only when its inputs changed (:mod:`po_i18n.dirty`);
        and whether this is the preview (``mkdocs serve``): then what shows in English is
        outlined with its catalog line, and the live reload keeps the reader's place
        (:mod:`po_i18n.preview`). ``mkdocs build`` does neither."""
        self._dirty = DirtyPages() if dirty else None
        self._preview = command == "serve"

    @event_priority(50)  # before mkdocs-static-i18n's on_config (-100) reads which languages to build
    def _preview_languages(self, config):
        """With ``PO_I18N_PREVIEW_LANGUAGES=sv`` (``po-i18n serve --lang sv``), build the
        default language and the named ones only; a strict build refuses the variable.
        Under ``--dirty``, Material's search indexes the pages of each rebuild alone."""
        wanted = set(os.environ.get(PREVIEW_VARIABLE, "").replace(",", " ").split())
        plugin = i18n_plugin(config)
        material_search = config.plugins.get("material/search")
        if self._dirty is not None and getattr(material_search, "is_dirty", False):
            # Under --dirty, Material's search merges each rebuild's index into the previous
            # one; with mkdocs-static-i18n stacking every language's entries into it, the
            # index grows with each rebuild (5, 15, 31, 54 s per rebuild at 250 pages). The
            # preview's search holds the pages of its last rebuild instead.
            material_search.is_dirty = False
            log.info("preview: search covers the pages rendered by the last rebuild; restart for all")
        if not wanted or plugin is None or plugin.building or plugin.current_language not in (None, plugin.default_language):
            return config
        if config.strict:
            raise PluginError(f"{PREVIEW_VARIABLE}={os.environ[PREVIEW_VARIABLE]} builds only some languages; a strict "
                              f"build needs every language: unset {PREVIEW_VARIABLE} (it is meant for 'po-i18n serve --lang')")
        known = {lang.locale for lang in plugin.config.languages}
        unknown = wanted - known
        if unknown:
            raise PluginError(f"{PREVIEW_VARIABLE}: unknown language(s) {', '.join(sorted(unknown))}; "
                              f"mkdocs.yml lists {', '.join(sorted(known))}")
        left_out = []
        for lang in plugin.config.languages:
            if lang.locale not in wanted and lang.locale != plugin.default_language and lang.build:
                lang["build"] = False
                left_out.append(lang.locale)
            elif lang.locale in wanted and not lang.build:  # carried unpublished (build: false): previewed all the same
                lang["build"] = True
        if left_out:
            log.info(f"preview of {', '.join(plugin.build_languages)} only ({PREVIEW_VARIABLE}); not built: {', '.join(left_out)}")
        return config

    @event_priority(-110)  # after mkdocs-static-i18n has set up the language's config
    def _translate_config(self, config):
        """Refuse a configuration the plugin cannot work with (one line saying what to add),
        then translate site name and description and the permalinks' tooltip."""
        if i18n_plugin(config) is None:
            raise PluginError("po-i18n: needs the mkdocs-static-i18n plugin: add '- i18n:' with 'docs_structure: suffix' "
                              "and your languages under plugins:, before '- po-i18n'")
        for problem in config_problems(project_of(config), list(config.markdown_extensions)):
            raise PluginError(problem)
        if config.strict and logging.getLogger("mkdocs.plugins").getEffectiveLevel() > logging.WARNING:
            # mkdocs build -q sets the mkdocs logger to ERROR (mkdocs/__main__.py, quiet_option); without this a
            # warning never reaches the strict-mode counter on that logger and a broken translation is published
            logging.getLogger("mkdocs.plugins").setLevel(logging.WARNING)
        project = project_of(config)  # mkdocs.yml as written: the English strings, the msgids
        verdicts.use(project.root / self.config.cache_dir if self.config.cache else None, project.root)
        if self.config.cache:
            highlight_memo.install()  # each language's copy of a code block is highlighted once
        table = _site_translations(config)
        for key in SITE_CONFIG_KEYS:
            english = project.config.get(key)
            if english:
                config[key] = table.get(english, english)
        toc = config.mdx_configs.get("toc")
        if toc is not None and toc.get("permalink"):  # Python-Markdown's toc writes it as the title
            toc["permalink_title"] = interface_of(config).text(PERMALINK)
        return config

    on_config = CombinedEvent(_preview_languages, _translate_config)

    @event_priority(-110)  # after mkdocs-static-i18n's on_nav (-100) has built the language's navigation
    def on_nav(self, nav, config, files):
        """Translate the navigation titles mkdocs.yml gives in words (``- Home: index.md``,
        sections), from ``_site.po``; a title whose translation is missing or refused stays
        English. (mkdocs-static-i18n's own ``nav_translations`` still applies first.)"""
        table = _site_translations(config)
        if not table:
            return nav
        titles = set(nav_titles(project_of(config).config.get("nav")))

        def walk(items) -> None:
            for item in items:
                if item.title in titles and item.title in table:
                    item.title = table[item.title]
                walk(getattr(item, "children", None) or [])

        walk(nav.items)
        return nav

    def on_pre_build(self, config):
        """Check every built translation's catalogs once, while the default language builds
        (mkdocs-static-i18n builds it first), before any page is read.

        A catalog that cannot be read stops the build with ``file:line: reason``. Container
        syntax a page uses but mkdocs.yml does not enable, and every problem of the
        catalogs of each language being built, is a warning, so one ``mkdocs build --strict``
        names the problems of all languages. Messages shown in English are a warning with
        ``untranslated: fail`` and an info line with ``untranslated: warn``.
        """
        language, default = language_of(config)
        if language != default:
            return
        project = project_of(config)
        for warning in page_warnings(project):  # syntax the site does not enable renders as text
            log.warning(warning)
        pending = log.warning if self.config.untranslated == "fail" else log.info
        languages = [code for code in i18n_plugin(config).build_languages if code != default]
        computed = prejudge(project, languages, check_of(config))  # a cold store: on every core
        if computed:
            log.debug(f"po-i18n: {computed} verdicts computed in parallel")
        for code in languages:
            for warning in translation_warnings(project, code, check_of(config), pending=False):
                log.warning(warning)
            for line in pending_warnings(project, code):
                pending(line)

    @event_priority(-120)  # after mkdocs-static-i18n, which only handles files from docs_dir
    def on_files(self, files, config):
        """Add the generated translation status page under the language being built, and
        with per-language search the search worker, beside Material's at the site root
        (the same file for every language: Material's worker and its lunr languages lie
        there only)."""
        uri = self.config.status_page
        if uri and files.get_file_from_path(uri) is None:
            language, default = language_of(config)
            page = File.generated(config, uri, content="# Translation status\n")
            if language != default:
                page.dest_uri = f"{language}/{page.dest_uri}"
            files.append(page)
        if self._dirty is not None:
            language, default = language_of(config)
            self._dirty.mark(files, project_of(config), language, default, frozenset({uri} if uri else ()))
        if self._search_per_language(config):
            existing = files.get_file_from_path(search.WORKER_URI)
            if existing is not None:
                files.remove(existing)
            files.append(File.generated(config, search.WORKER_URI, content=search.worker_source()))
        return files

    def on_page_markdown(self, markdown, page, config, files):
        """Render the English page in the language being built; missing or unsafe messages
        stay English, and a page that is not fully translated says so at the top. A page
        another plugin or hook generates (``File.generated``) has no English source in
        docs/ and so no catalog: it is left to its generator, which writes it in the
        language being built."""
        project = project_of(config)
        language, default = language_of(config)
        if self.config.status_page and page.file.src_uri == self.config.status_page:
            return status_markdown(project, language, interface_of(config), check_of(config), self.config.status_page)
        if language == default or page.file.generated_by is not None:
            return markdown
        path = project.catalog_path(language, page.file.src_uri)
        catalog = po.load_cached(path)
        mark = marker(catalog, path, path.relative_to(project.root).as_posix()) if self._preview else None
        # A missing catalog renders like an empty one (on_pre_build warned), notice included.
        result = render_checked(markdown, po.translations(catalog), check_of(config).page(markdown), project.engine,
                                fallback_lang=default, mark=mark)
        if self.config.notice and (result.translated < result.total or catalog is None):
            english = page.url[len(language) + 1:] if page.url.startswith(f"{language}/") else page.url
            url = posixpath.relpath("/" + english, "/" + page.url) + ("/" if english.endswith("/") or not english else "")
            return with_notice(result.markdown, 0 if catalog is None else result.percent, url, interface_of(config), default)
        return result.markdown

    @event_priority(0)  # after mkdocs-static-i18n's on_page_context (50), which skips generated pages
    def on_page_context(self, context, page, config, nav):
        """Point the language selector of the generated status page at the status page in
        each language (mkdocs-static-i18n leaves the previous page's links there)."""
        if self.config.status_page and page.file.src_uri == self.config.status_page:
            point_selector(config, self.config.status_page)
        return context

    def _search_per_language(self, config) -> bool:
        """Whether the option is on and the build has Material's search (:func:`po_i18n.search.applies`)."""
        return self.config.search_per_language and search.applies(config)

    @event_priority(-200)  # after other plugins' changes to the page
    def on_post_page(self, output, page, config):
        """Point a page's search at its language's index and at the plugin's search worker;
        in the preview, add the style of its marks and the script keeping the reader's place."""
        if self._preview:
            output = with_preview(output)
        if not self._search_per_language(config):
            return output
        return search.rewrite_config(output, *language_of(config))

    @event_priority(-200)
    def on_post_template(self, output_content, template_name, config):
        """The same for the theme's static pages (the 404 page of each language)."""
        if not template_name.endswith(".html") or not self._search_per_language(config):
            return output_content
        return search.rewrite_config(output_content, *language_of(config))

    @event_priority(-200)  # after mkdocs-static-i18n has written the merged index
    def on_post_build(self, config):
        """Keep the verdicts of the safety check for the next build; split the merged
        search index into one index per language (only once, after the last language is
        built)."""
        if self._dirty is not None:
            self._dirty.built()
        plugin = i18n_plugin(config)
        if plugin is None or plugin.building:
            return
        verdicts.save()
        if not self._search_per_language(config):
            return
        search.write_language_indexes(config.site_dir, list(plugin.build_languages), plugin.default_language,
                                      config.theme.get_env())

    def on_build_error(self, error):
        """Keep the verdicts computed before the error: they hold whatever failed. A dirty
        rebuild renders what this one marked again."""
        verdicts.save()
        if self._dirty is not None:
            self._dirty.failed()

    def on_serve(self, server, config, builder):
        """Rebuild when a catalog changes, not only docs/."""
        server.watch(str(project_of(config).i18n_dir))
        return server
