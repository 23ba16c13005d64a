"""MkDocs hook: each page's own description and link preview, in the page's language.

The description is the start of the page's first paragraph of prose, or on an English page
the page's front matter ``description`` (:mod:`coursekit.page_summary`), set where Material reads it
(``page.meta.description``, ``base.html``); Open Graph and Twitter card tags repeat it
(``docs/overrides/main.html``). No preview image: nothing is fetched from another host.
"""
from __future__ import annotations

from markupsafe import Markup
from mkdocs.plugins import event_priority

from coursekit.page_summary import first_paragraph, og_locale, shorten
from po_i18n.build_context import language_of


@event_priority(-110)  # after mkdocs-static-i18n has set up the language's config
def on_config(config):
    """The language's Open Graph locale for ``docs/overrides/main.html``."""
    config.extra["course_og_locale"] = og_locale(language_of(config)[0])
    return config


@event_priority(-200)  # the page as the other hooks leave it
def on_page_content(html, page, config, files):
    """``page.meta["description"]``: on English pages front matter's, else (and on every
    translated page) the start of the first paragraph.

    Stored HTML-escaped as ``Markup``: Material's ``base.html`` writes it into an attribute
    unescaped (MkDocs's Jinja environment does not autoescape), and ``|e`` in
    ``main.html`` leaves ``Markup`` as it is.
    """
    description = page.meta.get("description")
    language, default = language_of(config)
    if language != default or not isinstance(description, str) or not description.strip():
        # Front matter is never a message (po_i18n.segment): on a translated page it is
        # English, while the first paragraph is in the page's language.
        description = shorten(first_paragraph(html))
    if description:
        page.meta["description"] = Markup.escape(" ".join(description.split()))
    else:  # no paragraph: the site's description, in the page's language
        page.meta.pop("description", None)
    return html


def on_page_context(context, page, config, nav):
    """``course_social``: the page's Open Graph type (``website`` for each language's home
    page, ``article`` for the others) and absolute URL (only with ``site_url``)."""
    language, default = language_of(config)
    home = page.url in ("", "./", "index.html") or page.url == f"{language}/"
    context["course_social"] = {"type": "website" if home else "article", "url": page.canonical_url}
    return context
