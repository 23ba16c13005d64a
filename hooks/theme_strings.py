"""MkDocs hook: the course's theme overrides in the page's language (the 404 page and the
footer's credit line, ``docs/overrides/``), from the course's catalog domain
(``i18n/<lang>/_course.po``, :mod:`coursekit.course_strings`)."""
from __future__ import annotations

from mkdocs.plugins import event_priority

from coursekit.course_strings import MADE_WITH, NOT_FOUND_HOME, NOT_FOUND_TEXT, NOT_FOUND_TITLE
from po_i18n.build_context import interface_of

_LINK = "\x00"  # where the footer template puts the link


def _around(text: str, english: str) -> list[str]:
    """The text before and after the link, for docs/overrides/partials/copyright.html."""
    before, found, after = text.partition(_LINK)
    return [before, after] if found else english.split(_LINK, 1)


@event_priority(-110)  # after mkdocs-static-i18n has set up the language's config
def on_config(config):
    """The strings docs/overrides/ templates read from ``config.extra.course_ui``."""
    ui = interface_of(config, "course")
    config.extra["course_ui"] = {
        "not_found_title": ui.text(NOT_FOUND_TITLE),
        "not_found_text": ui.text(NOT_FOUND_TEXT),
        "not_found_home": ui.text(NOT_FOUND_HOME),
        "made_with": _around(ui.text(MADE_WITH, generator=_LINK), MADE_WITH.msgid % {"generator": _LINK}),
    }
    return config
