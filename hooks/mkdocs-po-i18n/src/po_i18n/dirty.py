"""Which pages a dirty rebuild (``mkdocs serve --dirty``) must render again.

MkDocs's ``--dirty`` rebuilds a page only when its Markdown file is newer than its HTML
(``File.is_modified``, ``mkdocs/structure/files.py``). A translated page also depends on
its catalog, the language's interface catalogs and the files the page includes, so a
translator's catalog edit would never show; and comparing with the HTML's time misses an
edit saved while the previous rebuild was still writing. So the plugin decides instead:
a page is rendered again when what it was last rendered from in this process changed,
by modification time and size of each file (taken before the page is read, so an edit
during a rebuild shows in the next one), or when its HTML is missing. A build without
``--dirty`` is unchanged.

Navigation, search and other pages are not refreshed by a dirty rebuild (MkDocs warns
so); a catalog edit touches its own page in its own language only. ``_site.po`` (site
name, navigation titles) is an input of every page of its language.
"""
from __future__ import annotations

import os
from pathlib import Path

from .filecache import stamps
from .includes import included
from .project import Project

__all__ = ["DirtyPages"]


class DirtyPages:
    """What each page of each language was last rendered from (one per ``mkdocs serve``)."""

    def __init__(self) -> None:
        self._built: dict[tuple[str, str], tuple] = {}
        self._pending: dict[tuple[str, str], tuple] = {}

    def mark(self, files, project: Project, language: str, default: str, always: frozenset[str] = frozenset()) -> int:
        """Give each documentation page of ``files`` (a ``mkdocs.structure.files.Files``)
        an ``is_modified`` that is true when the page must be rendered again; pages in
        ``always`` (src URIs: generated pages) always are.

        Returns:
            How many pages will be rendered.
        """
        interface = [] if language == default else list(project.interface_catalogs(language))
        count = 0
        for file in files.documentation_pages():
            key = (language, file.src_uri)
            inputs = self._inputs(file, project, language, default, interface)
            changed = (file.src_uri in always or inputs is None or self._built.get(key) != inputs
                       or not os.path.isfile(file.abs_dest_path))
            if changed:
                self._pending[key] = inputs
                count += 1
            file.is_modified = (lambda result: lambda: result)(changed)
        return count

    def built(self) -> None:
        """The pages marked since the last call were written: remember their inputs."""
        self._built.update(self._pending)
        self._pending.clear()

    def failed(self) -> None:
        """The build failed: what it marked is rendered again next time."""
        self._pending.clear()

    @staticmethod
    def _inputs(file, project: Project, language: str, default: str, interface: list[Path]) -> tuple | None:
        """Stamps of the page's Markdown, its catalog and the interface catalogs, and the
        digest of what it includes; ``None`` for a page whose Markdown is not a file."""
        if not file.abs_src_path or not os.path.isfile(file.abs_src_path):
            return None
        source = Path(file.abs_src_path)
        files = (source, *(() if language == default else (project.catalog_path(language, file.src_uri),)), *interface)
        return stamps(files), included(project.engine, source.read_text(encoding="utf-8"))
