"""MkDocs hook: per-language metadata search engines and Material's front end rely on.

* ``<link rel="alternate" hreflang>`` tags become absolute URLs (search engines ignore
  relative ones) and gain ``x-default`` (the English page);
* every language gets its own ``<lang>/404.html``, rendered in that language
  (mkdocs-static-i18n alone leaves one root 404 page in whichever language was built
  last); the root one is English;
* Material's language selector fetches ``sitemap.xml`` next to each alternate page
  (``shared/BROWSER-FACTS.md``); every page folder gets a copy of the site map so
  those requests succeed instead of filling the console with 404 errors.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from mkdocs.plugins import CombinedEvent, event_priority

from coursekit.build_context import i18n_plugin, language_of

_ALTERNATE = re.compile(r'<link rel="alternate" href="(?P<href>[^"]*)" hreflang="(?P<lang>[\w-]+)">')
_english_404: dict[str, bytes] = {}


@event_priority(-200)
def on_post_page(output, page, config):
    """Absolute hreflang alternates plus x-default, resolved against the page's canonical URL."""
    if not config.site_url or not page.canonical_url:
        return output
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


_SELECT_LINK = re.compile(r'<a href="[^"]*" hreflang="(?P<lang>[\w-]+)" class="md-select__link"(?P<rest>[^>]*)>')
_ALTERNATE_LINE = re.compile(r'[ \t]*<link rel="alternate" href="[^"]*" hreflang="[\w-]+">\n?')


def _fix_404(html: str, config, plugin) -> str:
    """A 404 page is no page's translation: its language selector leads to each language's
    home page, and it has no hreflang alternates (mkdocs-static-i18n leaves those of the
    last page it rendered)."""
    root = urlsplit(config.site_url or "/").path.rstrip("/") + "/"

    def home(match: re.Match) -> str:
        lang = match.group("lang")
        href = root if lang == plugin.default_language else f"{root}{lang}/"
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
        _english_404[config.site_dir] = html.encode("utf-8")
    else:
        (Path(config.site_dir) / plugin.current_language).mkdir(exist_ok=True)
        (Path(config.site_dir) / plugin.current_language / "404.html").write_text(html, encoding="utf-8")


@event_priority(-200)  # after every language is built
def _finish(config):
    """Put the English 404 back at the root and copy the site map into every page folder."""
    plugin = i18n_plugin(config)
    if plugin is None or plugin.building:
        return
    site = Path(config.site_dir)
    if config.site_dir in _english_404:
        (site / "404.html").write_bytes(_english_404.pop(config.site_dir))
    sitemap = site / "sitemap.xml"
    if sitemap.is_file():
        for index in site.rglob("index.html"):
            folder = index.parent
            if folder != site and not (folder / "sitemap.xml").exists():
                shutil.copyfile(sitemap, folder / "sitemap.xml")


on_post_build = CombinedEvent(_keep_404, _finish)
