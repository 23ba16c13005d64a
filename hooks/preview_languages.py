"""MkDocs hook: a preview of English and the languages a translator works on, not all five.

``course serve --lang sv`` runs ``mkdocs serve`` with ``COURSE_PREVIEW_LANGUAGES=sv``:
this hook then sets ``build: false`` on every other translation in the
mkdocs-static-i18n configuration before the plugin reads it (its ``on_config`` runs at
priority -100), so each rebuild after a save builds two languages instead of five. The
default language is always built (the plugin needs it). A strict build refuses the
variable: what is published has every language.
"""
from __future__ import annotations

import logging
import os

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

from coursekit.build_context import i18n_plugin

log = logging.getLogger("mkdocs.hooks.preview_languages")
VARIABLE = "COURSE_PREVIEW_LANGUAGES"  # set by coursekit.cli (course serve --lang)


@event_priority(50)  # before mkdocs-static-i18n's on_config
def on_config(config):
    """Leave out the translations not asked for, when ``COURSE_PREVIEW_LANGUAGES`` is set."""
    wanted = set(os.environ.get(VARIABLE, "").replace(",", " ").split())
    plugin = i18n_plugin(config)
    if not wanted or plugin is None or plugin.building or plugin.current_language not in (None, plugin.default_language):
        return config
    if config.strict:
        raise PluginError(f"{VARIABLE}={os.environ[VARIABLE]} builds only some languages; a strict build needs every "
                    f"language: unset {VARIABLE} (it is meant for 'course serve --lang')")
    known = {lang.locale for lang in plugin.config.languages}
    unknown = wanted - known
    if unknown:
        raise PluginError(f"{VARIABLE}: unknown language(s) {', '.join(sorted(unknown))}; mkdocs.yml lists {', '.join(sorted(known))}")
    left_out = []
    for lang in plugin.config.languages:
        if lang.locale not in wanted and lang.locale != plugin.default_language and lang.build:
            lang["build"] = False
            left_out.append(lang.locale)
    if left_out:
        log.info(f"preview of {', '.join(plugin.build_languages)} only ({VARIABLE}); not built: {', '.join(left_out)}")
    return config
