"""MkDocs hook: this project's warnings fail a strict build even with ``-q``.

``mkdocs build -q`` sets the ``mkdocs`` logger to ERROR (``mkdocs/__main__.py``,
``quiet_option``), so a warning of a hook is dropped before MkDocs's strict-mode counter
(a ``CountHandler`` on that logger, ``mkdocs/commands/build.py``) can see it, and a
changed, unverified program would be published with exit code 0. In a strict build this
hook sets the ``mkdocs.hooks`` logger, parent of every hook's logger, to WARNING: its
records then reach the counter (Python checks only the emitting logger's level, never
its parents', when a record propagates) and are printed, so a quiet build still says
why it failed. Without ``--strict`` nothing changes.
"""
from __future__ import annotations

import logging

_HOOKS = logging.getLogger("mkdocs.hooks")


def on_config(config):
    """Let the hooks' warnings count in strict mode, whatever ``-q`` said."""
    if config.strict and _HOOKS.getEffectiveLevel() > logging.WARNING:
        _HOOKS.setLevel(logging.WARNING)
    return config
