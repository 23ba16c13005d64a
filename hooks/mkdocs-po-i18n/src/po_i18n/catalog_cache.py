"""Parsed catalogs kept on disk beside the verdicts (:mod:`po_i18n.verdicts`).

Reading a catalog checks its bytes (UTF-8, no byte order mark, text, PO syntax both
polib and msgfmt accept) and parses it with polib, about ten milliseconds for a lesson's
catalog; a build reads every catalog of every language. The result is a pure function
of the file's bytes, so while a verdict store is in use (a build, ``po-i18n check``) the
parsed catalog is kept as ``<cache folder>/catalogs/<SHA-256 of the bytes>.pickle`` and the
next process unpickles it instead. Only bytes that passed every check are kept; the
checks of the file's place (a regular file, reached without a link) are made on every
read by :func:`po_i18n.catalog.load`. The folder holds the :data:`KEEP` most recently
written catalogs. Nothing is kept without a store.
"""
from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path

import polib

from . import verdicts

__all__ = ["KEEP", "kept", "keep"]

KEEP = 500  # catalog versions; the course has 45 catalogs
_FORMAT = f"1-polib-{polib.__version__}"


def _path(raw: bytes) -> Path | None:
    store = verdicts.active()
    if store is None:
        return None
    return store.folder / "catalogs" / f"{hashlib.sha256(_FORMAT.encode() + raw).hexdigest()}.pickle"


def kept(raw: bytes) -> polib.POFile | None:
    """The catalog parsed from ``raw`` (the file's bytes) by an earlier process, or None."""
    path = _path(raw)
    if path is None:
        return None
    try:
        with open(path, "rb") as f:
            catalog = pickle.load(f)
    except Exception:  # noqa: BLE001 - a missing, partial or foreign file: parse again
        return None
    return catalog if isinstance(catalog, polib.POFile) else None


def keep(raw: bytes, catalog: polib.POFile) -> None:
    """Keep the catalog parsed from ``raw`` for later processes (never raises)."""
    path = _path(raw)
    if path is None or path.exists():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, suffix=".tmp", delete=False) as out:
            pickle.dump(catalog, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(out.name, path)
        files = sorted(path.parent.glob("*.pickle"), key=lambda p: p.stat().st_mtime_ns)
        for old in files[:-KEEP]:
            old.unlink(missing_ok=True)
    except OSError:
        return
