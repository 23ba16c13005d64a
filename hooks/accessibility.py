"""MkDocs hook: accessibility fixes to Material's generated HTML.

Material 9.8 gives its search dialog (``div.md-search[role=dialog]``) no accessible name
(Lighthouse audit ``aria-dialog-name``); it gets the localized label of its own search
field, so screen readers announce it in the page's language.

Each entry of the language selector names its language in that language ("日本語",
"Svenska"); it gets ``lang`` besides Material's ``hreflang`` so that screen readers
pronounce it as such (WCAG 2.2 success criterion 3.1.2, "Language of Parts").
"""
from __future__ import annotations

import re

from mkdocs.plugins import event_priority

_DIALOG = re.compile(r'<div class="md-search" data-md-component="search" role="dialog">')
_FIELD_LABEL = re.compile(r'<input type="text"[^>]*class="md-search__input"[^>]*>')
_ARIA_LABEL = re.compile(r'aria-label="([^"]*)"')
_SELECT_LINK = re.compile(r'(<a href="[^"]*" hreflang="([A-Za-z0-9-]+)" class="md-select__link")>')


def _fixed(output: str) -> str:
    output = _SELECT_LINK.sub(r'\1 lang="\2">', output)
    field = _FIELD_LABEL.search(output)
    label = _ARIA_LABEL.search(field.group(0)) if field else None
    if label is None:
        return output
    return _DIALOG.sub(f'<div class="md-search" data-md-component="search" role="dialog" aria-label="{label.group(1)}">',
                       output, count=1)


@event_priority(-200)
def on_post_page(output, page, config):
    """Name the search dialog after the search field's (localized) label; mark each
    language selector entry with its language."""
    return _fixed(output)


@event_priority(-200)
def on_post_template(output_content, template_name, config):
    """The same for the theme's static pages (the 404 page of each language)."""
    return _fixed(output_content)
