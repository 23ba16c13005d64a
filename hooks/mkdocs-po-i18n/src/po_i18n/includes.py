"""What a page includes: the digest of its include lines expanded by pymdownx.snippets.

A page's rendering, and so every verdict about it (:mod:`po_i18n.page_guard`, the page's
link definitions in :mod:`po_i18n.safety`), depends on the files it includes, which
change under ``mkdocs serve``. :func:`included` is that dependency as one string, to be
part of a memo's or a stored verdict's key.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from .filecache import stamps
from .markdown_engine import MarkdownEngine

__all__ = ["clear_caches", "included"]

_SNIPPETS = "pymdownx.snippets"
_includers: dict[MarkdownEngine, object] = {}


def included(engine: MarkdownEngine, source: str) -> str:
    """A digest of what ``source`` includes with ``engine``'s pymdownx.snippets (its include
    lines expanded by the extension's own preprocessor, registered as ``"snippet"``), or
    ``""`` without that extension. A page's rendering depends on the files it includes, and
    they change under ``mkdocs serve``; memos and stored verdicts keep this in their keys.

    The digest is remembered while every file the expansion read keeps its modification
    time and size (an expansion that fetched a URL, asked for a path it did not find, or
    failed is not remembered: a file could appear)."""
    if not engine.has(_SNIPPETS):
        return ""
    hit = _memo.get((engine, source))
    if hit is not None and stamps(hit[1]) == hit[2]:
        return hit[0]
    includer = _includers.get(engine)
    if includer is None:
        includer = _includers[engine] = _recording_includer(engine)
    reader = includer.preprocessors["snippet"]
    reader.files_read, reader.complete = [], True
    try:
        lines = reader.run(source.split("\n"))
    except Exception as exc:  # noqa: BLE001 - a missing file is the build's error to report, not ours
        return f"{type(exc).__name__}: {exc}"
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    if reader.complete:
        files = tuple(Path(f) for f in reader.files_read)
        _memo[(engine, source)] = (digest, files, stamps(files))
    return digest


def _recording_includer(engine: MarkdownEngine):
    """A Python-Markdown of the engine's pymdownx.snippets alone, whose preprocessor notes
    the files it reads (``files_read``) and whether it read only files (``complete``)."""
    includer = engine.markdown(without=[n for n in engine.extensions if n != _SNIPPETS])
    reader = includer.preprocessors["snippet"]
    read_lines, get_path, download = reader.read_lines, reader.get_snippet_path, reader.download

    def reading(path):
        reader.files_read.append(path)
        return read_lines(path)

    def finding(path):
        found = get_path(path)
        if found is None:
            reader.complete = False
        return found

    def downloading(url):
        reader.complete = False
        return download(url)

    downloading.cache_clear = getattr(download, "cache_clear", lambda: None)
    reader.read_lines, reader.get_snippet_path, reader.download = reading, finding, downloading
    return includer


_memo: dict[tuple[MarkdownEngine, str], tuple[str, tuple[Path, ...], tuple]] = {}


def clear_caches() -> None:
    """Forget every expansion (for measuring cold costs)."""
    _includers.clear()
    _memo.clear()
