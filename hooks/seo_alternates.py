"""MkDocs hook: per-language metadata search engines and Material's front end rely on,
right for the address the site is built for, or for any address.

With ``site_url`` (``SITE_URL``):

* ``<link rel="alternate" hreflang>`` tags become absolute URLs (search engines ignore
  relative ones) and gain ``x-default`` (the English page);
* Material fetches ``sitemap.xml`` next to each alternate page on every page load
  (``shared/BROWSER-FACTS.md``; ``ui()`` in its bundle) and parses it on the main
  thread. The full site map stays at the root, the one file search engines read; every
  other page folder gets an empty one, so those requests succeed (no 404 in the
  console) and cost nothing. Material would use the parsed map only in its own
  language-selector click handler, which ``course.js`` pre-empts.

Without it the site must work at any address and sub-path
(:mod:`coursekit.site_address`): no alternates (only absolute ones are valid), an empty
site map where Material looks for one, relative links in the language selector of home
pages and 404 pages, and 404 pages that find the site root themselves. The build says
so in one line.

Either way every language gets its own ``<lang>/404.html``, rendered in that language
(mkdocs-static-i18n alone leaves one root 404 page in whichever language was built
last); the root one is English.
"""
from __future__ import annotations

import gzip
import logging
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from mkdocs.exceptions import PluginError
from mkdocs.plugins import CombinedEvent, event_priority
from mkdocs.utils import normalize_url

from po_i18n.build_context import i18n_plugin, language_of
from coursekit.site_address import EMPTY_SITEMAP, NO_SITE_URL_NOTICE, portable_404, relative_href

log = logging.getLogger("mkdocs.hooks.seo_alternates")
_ALTERNATE = re.compile(r'<link rel="alternate" href="(?P<href>[^"]*)" hreflang="(?P<lang>[\w-]+)">')
_ALTERNATE_LINE = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[\w-]+">\n?')
_SELECT_LINK = re.compile(r'<a href="(?P<href>[^"]*)" hreflang="(?P<lang>[\w-]+)" class="md-select__link"(?P<rest>[^>]*)>')
_english_404: dict[str, str] = {}


def _root_path(config) -> str:
    """The site root's path on the server: ``/course/`` for ``https://host/course/``."""
    return urlsplit(config.site_url or "/").path.rstrip("/") + "/"


@event_priority(-200)
def on_post_page(output, page, config):
    """Absolute hreflang alternates plus x-default, resolved against the page's canonical
    URL; without ``site_url``, no alternates. The language selector's links relative."""
    output = _SELECT_LINK.sub(
        lambda m: f'<a href="{relative_href(m["href"], page.url, _root_path(config))}" hreflang="{m["lang"]}" '
                  f'class="md-select__link"{m["rest"]}>', output)
    if not config.site_url or not page.canonical_url:
        return _ALTERNATE_LINE.sub("", output)
    _, default = language_of(config)
    found = {}

    def absolute(match: re.Match) -> str:
        href = urljoin(page.canonical_url, match.group("href"))
        found[match.group("lang")] = href
        return f'<link rel="alternate" href="{href}" hreflang="{match.group("lang")}">'

    output = _ALTERNATE.sub(absolute, output)
    if default in found and "x-default" not in found:
        last = list(_ALTERNATE.finditer(output))[-1]
        tag = f'\n    <link rel="alternate" href="{found[default]}" hreflang="x-default">'
        output = output[: last.end()] + tag + output[last.end():]
    return output


@event_priority(-100)  # after MkDocs's own context, before the theme renders
def on_template_context(context, template_name, config):
    """Without ``site_url``, render the 404 page with links relative to where it will lie
    (``404.html``, ``<lang>/404.html``) instead of absolute paths from the server root."""
    if template_name != "404.html" or config.site_url:
        return context
    language, default = language_of(config)
    base = "." if language == default else ".."
    context["base_url"] = base
    context["extra_css"] = [normalize_url(path, None, base) for path in config.extra_css]
    context["extra_javascript"] = [normalize_url(str(script), None, base) for script in config.extra_javascript]
    return context


def _fix_404(html: str, config, plugin) -> str:
    """A 404 page is no page's translation: its language selector leads to each language's
    home page, and it has no hreflang alternates (mkdocs-static-i18n leaves those of the
    last page it rendered)."""
    root = _root_path(config)
    own = "404.html" if plugin.current_language == plugin.default_language else f"{plugin.current_language}/404.html"

    def home(match: re.Match) -> str:
        lang = match.group("lang")
        href = root if lang == plugin.default_language else f"{root}{lang}/"
        if not config.site_url:
            href = relative_href(href, own)
        return f'<a href="{href}" hreflang="{lang}" class="md-select__link"{match.group("rest")}>'

    return _ALTERNATE_LINE.sub("", _SELECT_LINK.sub(home, html))


@event_priority(0)  # before mkdocs-static-i18n builds the next language over this one's 404.html
def _keep_404(config):
    """Keep the 404 page just rendered for the language being built."""
    plugin = i18n_plugin(config)
    page_404 = Path(config.site_dir) / "404.html"
    if plugin is None or not page_404.is_file():
        return
    html = _fix_404(page_404.read_text(encoding="utf-8"), config, plugin)
    if plugin.current_language == plugin.default_language:
        _english_404[config.site_dir] = html
    else:
        (Path(config.site_dir) / plugin.current_language).mkdir(exist_ok=True)
        (Path(config.site_dir) / plugin.current_language / "404.html").write_text(html, encoding="utf-8")


def _portable_404s(site: Path, languages: list[str], default: str) -> None:
    """Without ``site_url``: every language's 404 page finds the site root itself."""
    names = sorted(p.name for p in site.iterdir())
    for language in languages:
        own = "404.html" if language == default else f"{language}/404.html"
        path = site / own
        if path.is_file():
            try:
                html = portable_404(path.read_text(encoding="utf-8"), own, names)
            except ValueError as exc:  # a theme change: stop the build in one line
                raise PluginError(str(exc)) from None
            path.write_text(html, encoding="utf-8")


@event_priority(-200)  # after every language is built
def _finish(config):
    """Put the English 404 back at the root; with ``site_url``, keep the full site map at
    the root and put an empty one in every other page folder; without, leave an empty one
    in each language root and say so."""
    plugin = i18n_plugin(config)
    if plugin is None or plugin.building:
        return
    site = Path(config.site_dir)
    if config.site_dir in _english_404:
        (site / "404.html").write_text(_english_404.pop(config.site_dir), encoding="utf-8")
    sitemap = site / "sitemap.xml"
    if not config.site_url:
        _portable_404s(site, plugin.build_languages, plugin.default_language)
        for language in plugin.build_languages:  # where Material fetches it: config.base
            folder = site if language == plugin.default_language else site / language
            (folder / "sitemap.xml").write_text(EMPTY_SITEMAP, encoding="utf-8")
        (site / "sitemap.xml.gz").write_bytes(gzip.compress(EMPTY_SITEMAP.encode("utf-8"), mtime=0))
        log.info(NO_SITE_URL_NOTICE)
        return
    # A copy of the full map in each of the six alternates' folders made every hosted page
    # load fetch and parse 6 x 21 KB of XML (interleaved Lighthouse A/B: about 15 ms of TBT).
    # A site map below the root may list only URLs below its own folder anyway (sitemaps.org,
    # "Sitemap file location"), so a copy there was never valid for crawlers.
    if sitemap.is_file():
        for index in site.rglob("index.html"):
            folder = index.parent
            if folder != site and not (folder / "sitemap.xml").exists():
                (folder / "sitemap.xml").write_text(EMPTY_SITEMAP, encoding="utf-8")


on_post_build = CombinedEvent(_keep_404, _finish)
