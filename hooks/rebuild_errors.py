"""MkDocs hook: under ``mkdocs serve``, a build error is named again on every rebuild.

MkDocs's command line puts a :class:`mkdocs.utils.DuplicateFilter` on the
``mkdocs.commands.build`` logger (``mkdocs/__main__.py``), the logger ``build()`` uses
for the message of a :class:`~mkdocs.exceptions.BuildError` before it aborts
(``mkdocs/commands/build.py``). The filter lives as long as the process, so under
``mkdocs serve`` a translator who saves the same broken catalog twice is told
``i18n/sv/ddp-basics.po:291: unterminated string; …`` once, and after that only
``Aborted with a BuildError!``, with no file or line. This hook empties the filter's
memory when each build starts, so a message is still printed once per build, as MkDocs
intends, but again in the next one.
"""
from __future__ import annotations

import logging

from mkdocs.plugins import event_priority
from mkdocs.utils import DuplicateFilter

_BUILD_LOG = logging.getLogger("mkdocs.commands.build")


@event_priority(100)  # before any hook whose on_config may raise a BuildError
def on_config(config):
    """Forget the messages the previous build logged (see the module docstring)."""
    for log_filter in _BUILD_LOG.filters:
        if isinstance(log_filter, DuplicateFilter):
            log_filter.msgs.clear()
    return config
