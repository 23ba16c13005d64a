"""What the preview adds to a page, and a build never does: where each message shown in
English comes from, and a reader's place kept across the live reload.

The preview is ``mkdocs serve`` (``po-i18n serve`` runs it); MkDocs tells the plugin so
(``on_startup``'s ``command``), and ``mkdocs build`` never marks anything.

* :func:`marker` gives :func:`po_i18n.render.render` a ``mark``: each message of a
  translated page shown in English gets a class saying why (``po-i18n-fuzzy``,
  ``po-i18n-untranslated``, ``po-i18n-refused``) and a title naming its catalog and line
  (``i18n/sv/ddp-basics.po:123: fuzzy``). The title is made from the catalog's path and the
  entry's line only, never from a msgstr, and the renderer escapes it.
* :func:`with_preview` puts the stylesheet that outlines them (``assets/po-i18n-preview.css``)
  and the script that keeps the reader's place (``assets/po-i18n-preview.js``) into a page.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib.resources import files as package_files
from pathlib import Path

import polib

from . import catalog as po
from . import catalog_file
from .segment import Segment

__all__ = ["FUZZY", "REFUSED", "UNTRANSLATED", "marker", "with_preview"]

FUZZY = "po-i18n-fuzzy"
UNTRANSLATED = "po-i18n-untranslated"
REFUSED = "po-i18n-refused"
_STYLE = "po-i18n-preview.css"
_SCRIPT = "po-i18n-preview.js"


def marker(catalog: polib.POFile | None, path: Path, shown: str) -> Callable[[Segment, str | None], Mapping[str, str]]:
    """The ``mark`` of :func:`po_i18n.render.render` for one page's catalog in the preview.

    Args:
        catalog: the page's catalog as loaded (``None`` when it has none).
        path: the catalog's file (its lines are read for the entries' line numbers).
        shown: the catalog's path as the title names it, relative to the project
            (``i18n/sv/ddp-basics.po``).

    Returns:
        ``mark(segment, reason) -> {"class": ..., "title": ...}``: fuzzy entry
        ``"<shown>:<msgstr line>: fuzzy"``; empty msgstr ``"…: untranslated"``; a message the
        catalog lacks ``"<shown>: no entry for this message; run po-i18n update"``; a
        translation the safety check refused (``reason`` given) ``"…: translation refused;
        the build's warning says why"``.

    Raises:
        po_i18n.catalog.CatalogError: the catalog's file cannot be read (as loading it).
    """
    entries = {} if catalog is None else {e.msgid: e for e in catalog if not e.obsolete and e.msgctxt is None}
    lines = [] if catalog is None else catalog_file.read(path).decode("utf-8").splitlines()

    def mark(segment: Segment, reason: str | None) -> Mapping[str, str]:
        entry = entries.get(segment.msgid)
        if entry is None:
            lacking = "no catalog" if catalog is None else "no entry for this message"
            return {"class": UNTRANSLATED, "title": f"{shown}: {lacking}; run po-i18n update"}
        at = f"{shown}:{po.msgstr_lines(lines, entry).get(None, entry.linenum)}"
        if reason is not None:
            return {"class": REFUSED, "title": f"{at}: translation refused; the build's warning says why"}
        if entry.fuzzy:
            return {"class": FUZZY, "title": f"{at}: fuzzy"}
        return {"class": UNTRANSLATED, "title": f"{at}: untranslated"}

    return mark


@cache
def _asset(name: str) -> str:
    """A file of the package's ``assets/`` folder (package data, pyproject.toml)."""
    return (package_files("po_i18n") / "assets" / name).read_text(encoding="utf-8")


def with_preview(html: str) -> str:
    """A rendered page with the preview's stylesheet at the end of its head and its
    script at the end of its body, both inline (no file is added to the site).

    Args:
        html: the page (str); without ``</head>`` the style goes first, without
            ``</body>`` the script goes last.

    Returns:
        The page (str).

    Raises:
        OSError: the package was installed without its data (pyproject.toml's
            ``[tool.setuptools.package-data]`` names the two files).
    """
    style = f'<style id="po-i18n-preview-style">\n{_asset(_STYLE)}</style>'
    script = f'<script id="po-i18n-preview-script">\n{_asset(_SCRIPT)}</script>'
    head = html.find("</head>")
    html = style + html if head < 0 else html[:head] + style + html[head:]
    body = html.rfind("</body>")
    return html + script if body < 0 else html[:body] + script + html[body:]
