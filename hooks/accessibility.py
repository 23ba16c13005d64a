"""MkDocs hook: accessibility fixes to Material's generated HTML.

Material 9.8 gives its search dialog (``div.md-search[role=dialog]``) no accessible name
(Lighthouse audit ``aria-dialog-name``); it gets the localized label of its own search
field, so screen readers announce it in the page's language.
"""
from __future__ import annotations

import re

from mkdocs.plugins import event_priority

_DIALOG = re.compile(r'<div class="md-search" data-md-component="search" role="dialog">')
_FIELD_LABEL = re.compile(r'<input type="text"[^>]*class="md-search__input"[^>]*>')
_ARIA_LABEL = re.compile(r'aria-label="([^"]*)"')


@event_priority(-200)
def on_post_page(output, page, config):
    """Name the search dialog after the search field's (localized) label."""
    field = _FIELD_LABEL.search(output)
    label = _ARIA_LABEL.search(field.group(0)) if field else None
    if label is None:
        return output
    return _DIALOG.sub(f'<div class="md-search" data-md-component="search" role="dialog" aria-label="{label.group(1)}">',
                       output, count=1)
