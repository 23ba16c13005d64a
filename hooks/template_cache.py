"""MkDocs hook: compile each theme template once per process, not once per language.

mkdocs-static-i18n builds every language with a fresh Jinja environment, so Material's
templates were compiled five times per build (about a quarter of the build's time) and
again on every ``mkdocs serve`` reload. A shared in-memory bytecode cache lets the later
environments load the compiled code instead. Jinja checks each entry against a checksum
of the template source, so an edited template is compiled again
(https://jinja.palletsprojects.com/en/3.1.x/api/#bytecode-cache).
"""
from __future__ import annotations

import jinja2

_compiled: dict[str, bytes] = {}


class _SharedBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept in this process's memory, keyed as Jinja keys them."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        data = _compiled.get(bucket.key)
        if data is not None:
            bucket.bytecode_from_string(data)  # ignored by Jinja when the checksum differs

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        _compiled[bucket.key] = bucket.bytecode_to_string()


_CACHE = _SharedBytecodeCache()


def on_env(env, config, files):
    """Give the build's Jinja environment the shared cache."""
    env.bytecode_cache = _CACHE
    return env
