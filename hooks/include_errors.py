"""MkDocs hook: a broken include stops the build in one line, before any page is read.

pymdownx.snippets (``check_paths: true``) would stop at the first page that includes a
missing file or section with ``Snippet section 'summ' could not be located`` and a
traceback. This hook checks every page's includes first (:mod:`coursekit.includes`, the
extension's own preprocessor and parsing) and raises a :class:`~mkdocs.exceptions.PluginError`
naming page, line, include and what the file has; MkDocs prints a plugin error as one
line and no traceback, in ``mkdocs build`` and on every rebuild of ``mkdocs serve``.
"""
from __future__ import annotations

from pathlib import Path

from mkdocs.exceptions import PluginError
from po_i18n.filecache import stamps

from coursekit.includes import EXTENSION, broken_includes, snippet_preprocessor

# mkdocs-static-i18n builds each language in turn: the pages and snippets last found
# clean (their paths, times and sizes) need no second look until one of them changes.
_clean: list[tuple] = []  # the last such key


def on_files(files, config):
    """Refuse the build when an include of any page is broken (see the module docstring)."""
    options = config["mdx_configs"].get(EXTENSION, {})
    preprocessor = snippet_preprocessor(options) if EXTENSION in config["markdown_extensions"] else None
    if preprocessor is None:
        return files
    pages = tuple(Path(page.abs_src_path) for page in files.documentation_pages())
    read = tuple(p for base, is_dir in preprocessor.get_bases() for p in (sorted(Path(base).rglob("*")) if is_dir else [Path(base)]))
    key = (repr(sorted(options.items())), pages + read, stamps(pages + read))
    if key in _clean:
        return files
    root = Path(config.config_file_path).parent
    problems = [line for page in pages for line in broken_includes(page, preprocessor, root)]
    if problems:
        raise PluginError("\n".join(problems))
    _clean[:] = [key]
    return files
