"""MkDocs hook: every page's scripts run after its first paint (coursekit.page_scripts).

Pages and the theme's own templates (the 404 page) alike; mkdocs-static-i18n builds each
language through the same events.
"""
from __future__ import annotations

from coursekit.page_scripts import defer_scripts


def on_post_page(output, page, config):
    """A page's ``<script src>`` as placeholders that the page's loader appends."""
    return defer_scripts(output)


def on_post_template(output_content, template_name, config):
    """The same for a theme template rendered on its own (``404.html``)."""
    return defer_scripts(output_content)
