"""MkDocs hook: the course's theme overrides in the page's language (the 404 page and the
footer: credit line, licences, link to the translation status page, ``docs/overrides/``)
and the name of Material's colour scheme toggle, from the course's catalog domain
(``i18n/<lang>/_course.po``, :mod:`coursekit.course_strings`)."""
from __future__ import annotations

import re

from mkdocs.plugins import event_priority

from coursekit.course_strings import (LICENCE, MADE_WITH, NOT_FOUND_HOME, NOT_FOUND_TEXT, NOT_FOUND_TITLE, TO_DARK,
                                      TO_LIGHT)
from po_i18n.build_context import interface_of, language_of, plugin_of, project_of
from po_i18n.interface import STATUS_TITLE
from po_i18n.selector import language_url

_LINK = "\x00"  # where the footer template puts the link
# The licences of code and text: placeholder of LICENCE, name (not translated) and page
# (SPDX's page of the MIT licence; Creative Commons' deed of CC BY 4.0).
LICENCES = {"code": ("MIT", "https://spdx.org/licenses/MIT.html"),
            "text": ("CC BY 4.0", "https://creativecommons.org/licenses/by/4.0/")}
_MARKS = {"code": "\x01", "text": "\x02"}  # where the footer template puts each licence's link
# Material's toggle names as mkdocs.yml writes them, translated (Material leaves them as given:
# https://squidfunk.github.io/mkdocs-material/setup/changing-the-colors/#color-palette-toggle).
_TOGGLES = {s.msgid: s for s in (TO_DARK, TO_LIGHT)}


def _around(text: str, english: str) -> list[str]:
    """The text before and after the link, for docs/overrides/partials/copyright.html."""
    before, found, after = text.partition(_LINK)
    return [before, after] if found else english.split(_LINK, 1)


def _licence(text: str) -> list[dict]:
    """The licence sentence as the footer template writes it: text parts (``{"text": ...}``)
    and links (``{"text": name, "href": url}``), in the translation's order."""
    links = {_MARKS[key]: {"text": name, "href": href} for key, (name, href) in LICENCES.items()}
    return [links.get(part, {"text": part}) for part in re.split(f"([{''.join(links)}])", text) if part]


def _translate_toggles(config, ui) -> None:
    """Each toggle of ``theme.palette`` whose name in mkdocs.yml is a course string gets
    that string in the language being built."""
    written = project_of(config).config.get("theme", {}).get("palette")
    palette = config.theme.get("palette")
    if not isinstance(written, list) or not isinstance(palette, list):
        return
    for source, scheme in zip(written, palette):
        name = (source.get("toggle") or {}).get("name")
        if name in _TOGGLES and scheme.get("toggle"):
            scheme["toggle"]["name"] = ui.text(_TOGGLES[name])


@event_priority(-110)  # after mkdocs-static-i18n has set up the language's config
def on_config(config):
    """The strings docs/overrides/ templates read from ``config.extra.course_ui``, and the
    colour scheme toggle's name."""
    ui = interface_of(config, "course")
    status_page = plugin_of(config).config.status_page if plugin_of(config) else None
    config.extra["course_ui"] = {
        "not_found_title": ui.text(NOT_FOUND_TITLE),
        "not_found_text": ui.text(NOT_FOUND_TEXT),
        "not_found_home": ui.text(NOT_FOUND_HOME),
        "made_with": _around(ui.text(MADE_WITH, generator=_LINK), MADE_WITH.msgid % {"generator": _LINK}),
        "licence": _licence(ui.text(LICENCE, **_MARKS)),
        "status": {"title": interface_of(config).text(STATUS_TITLE),
                   "url": language_url(config, status_page, language_of(config)[0])} if status_page else None,
    }
    _translate_toggles(config, ui)
    return config
